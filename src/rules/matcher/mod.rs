//! The matcher language, one file per kind of condition (the shape ast-grep gives its rules): each kind's module
//! holds its YAML keys (`keys!`), its compile step and its match ([`Kind`]). This file registers the kinds —
//! `kinds!`, one line each — and does what all share: reading a matcher's keys (each key is handed to the kind that
//! owns it, so an unknown key is reported where it is written), the matcher's JSON schema (the kinds' keys), and
//! compiling and evaluating the kinds in order.
//!
//! Evaluation order: atomic conditions (they read the op alone), then the capture, then linked conditions
//! (relations, `scheduled_between`, composites), which walk to other ops and may capture; a matcher's captures are
//! kept only when all of it holds.

use super::error::{Cx, RuleError, RuleErrorKind};
use crate::ir::{Layer, Module, OpId};
use regex::Regex;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The ops a matcher named, by capture name (`op` is the reported op).
pub type Caps = BTreeMap<String, OpId>;

/// Walks stop after this many visited ops: rules stay fast on 50k-instruction modules and never loop.
pub const WALK_LIMIT: usize = 4096;

/// When a kind is compiled and evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Checks where its keys stand (compiled first); evaluates nothing.
    Keys,
    /// Reads the op alone.
    Atom,
    /// Names the op for what follows.
    Capture,
    /// Walks to other ops and may capture.
    Linked,
}

/// What compiling a matcher knows beyond its place in the YAML.
pub struct Env<'a> {
    /// The rule's layers: what a matcher names must exist in one of them.
    pub layers: &'a [Layer],
    /// The captures named so far, in order (`op` first).
    pub caps: &'a mut Vec<String>,
    /// This matcher describes a related op (under `operand`, `user`, ...), where the walk's keys belong.
    pub relation: bool,
}

/// One kind of condition: its keys, its compile step, its match.
pub trait Kind: Sized {
    /// Its keys as a pack writes them (`keys!`).
    type Def: Keys;
    const PHASE: Phase;
    /// The conditions its keys ask for (none when none of them is given); `cx` is the matcher's place.
    fn compile(def: &Self::Def, cx: &Cx, env: &mut Env) -> Result<Vec<Self>, RuleError>;
    /// Does op `id` satisfy it? A condition that captures adds to `caps`.
    fn holds(&self, m: &Module<'_>, id: OpId, caps: &mut Caps) -> bool;
}

/// A kind's keys: a struct made by `keys!`, one field per key.
pub trait Keys: Default + JsonSchema {
    const KEYS: &'static [&'static str];
    /// Reads the value of `key`, one of [`Keys::KEYS`].
    fn read<'de, A: MapAccess<'de>>(&mut self, key: &'static str, map: &mut A) -> Result<(), A::Error>;
}

/// A kind's keys: `keys! { pub struct NameDef { /// doc \n pub name: Option<String>, } }` — the struct (its doc
/// comments are the schema's descriptions), the list of its keys and the reading of each.
macro_rules! keys {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$fmeta:meta])* pub $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Default, schemars::JsonSchema)]
        #[serde(default)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl $crate::rules::matcher::Keys for $name {
            const KEYS: &'static [&'static str] = &[$(stringify!($field)),*];

            fn read<'de, A: serde::de::MapAccess<'de>>(
                &mut self,
                key: &'static str,
                map: &mut A,
            ) -> Result<(), A::Error> {
                match key {
                    $(stringify!($field) => self.$field = map.next_value()?,)*
                    _ => return Err(<A::Error as serde::de::Error>::unknown_field(key, Self::KEYS)),
                }
                Ok(())
            }
        }
    };
}
// (`keys!` reaches the kind modules by textual scope: they are declared below, by `kinds!`.)

/// The kinds, in the order their keys are listed (errors, schema); each line is a module of this folder and the
/// kind it defines. Within a [`Phase`], kinds compile and evaluate in this order.
macro_rules! kinds {
    ($($module:ident :: $kind:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// A matcher as a pack writes it: the keys of each kind.
        #[derive(Debug, Default)]
        pub struct MatcherDef {
            $(pub $module: <$module::$kind as Kind>::Def,)*
        }

        /// A compiled condition, of one kind.
        pub enum Cond {
            $($kind($module::$kind),)*
        }

        impl Cond {
            fn holds(&self, m: &Module<'_>, id: OpId, caps: &mut Caps) -> bool {
                match self {
                    $(Cond::$kind(c) => c.holds(m, id, caps),)*
                }
            }
        }

        impl MatcherDef {
            /// Every key a matcher may have, kind by kind.
            pub fn keys() -> &'static [&'static str] {
                static KEYS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
                    let mut all = Vec::new();
                    $(all.extend_from_slice(<<$module::$kind as Kind>::Def as Keys>::KEYS);)*
                    all
                });
                &KEYS
            }

            /// Each kind's phase and keys, in the order of `kinds!`.
            #[cfg(test)]
            fn kinds() -> Vec<(Phase, &'static [&'static str])> {
                vec![$((<$module::$kind as Kind>::PHASE, <<$module::$kind as Kind>::Def as Keys>::KEYS),)*]
            }

            /// Reads the value of `key` into the kind that owns it.
            fn read<'de, A: MapAccess<'de>>(&mut self, key: &'static str, map: &mut A) -> Result<(), A::Error> {
                $(
                    if <<$module::$kind as Kind>::Def as Keys>::KEYS.contains(&key) {
                        return self.$module.read(key, map);
                    }
                )*
                Err(de::Error::unknown_field(key, Self::keys()))
            }

            /// Compiles the kinds of `phase` into `out`.
            fn compile_phase(
                &self,
                phase: Phase,
                cx: &Cx,
                env: &mut Env,
                out: &mut Vec<Cond>,
            ) -> Result<(), RuleError> {
                $(
                    if <$module::$kind as Kind>::PHASE == phase {
                        let conds = <$module::$kind as Kind>::compile(&self.$module, cx, env)?;
                        out.extend(conds.into_iter().map(Cond::$kind));
                    }
                )*
                Ok(())
            }

            /// The schema of every key.
            fn schema_properties(generator: &mut SchemaGenerator) -> serde_json::Map<String, serde_json::Value> {
                let mut props = serde_json::Map::new();
                $(
                    let kind = <<$module::$kind as Kind>::Def as JsonSchema>::json_schema(generator);
                    if let Some(serde_json::Value::Object(p)) = kind.get("properties") {
                        props.extend(p.clone());
                    }
                )*
                props
            }
        }
    };
}

kinds! {
    op::Op,
    name::Name,
    dtype::Dtype,
    shape::Shape,
    memory_space::MemorySpace,
    attr::Attr,
    metadata::Metadata,
    custom_call_target::CustomCallTarget,
    function::Function,
    relation::Relation,
    between::Between,
    composite::Composite,
    capture::Capture,
    walk::Walk,
}

impl<'de> Deserialize<'de> for MatcherDef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct("MatcherDef", MatcherDef::keys(), MatcherVisitor)
    }
}

struct MatcherVisitor;

impl<'de> Visitor<'de> for MatcherVisitor {
    type Value = MatcherDef;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("struct MatcherDef")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MatcherDef, A::Error> {
        let mut def = MatcherDef::default();
        let mut seen: Vec<&'static str> = Vec::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if seen.contains(&key) {
                return Err(de::Error::duplicate_field(key));
            }
            seen.push(key);
            def.read(key, &mut map)?;
        }
        Ok(def)
    }
}

/// A matcher's key, refused while it is read when no kind owns it: the error then carries the key's position.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = &'static str;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<&'static str, D::Error> {
        d.deserialize_identifier(KeySeed)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = &'static str;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("field identifier")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<&'static str, E> {
        let keys = MatcherDef::keys();
        keys.iter().find(|k| **k == v).copied().ok_or_else(|| E::unknown_field(v, keys))
    }
}

impl JsonSchema for MatcherDef {
    fn schema_name() -> Cow<'static, str> {
        "Matcher".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let props = MatcherDef::schema_properties(generator);
        schemars::json_schema!({
            "description": "Conditions on one op; every key given must hold. Under a relation key, the same \
                matcher describes the related op and may say how to walk to it (`index`, `depth`, `through`, \
                `count`, `every`).",
            "type": "object",
            "properties": props,
            "additionalProperties": false,
        })
    }
}

/// A compiled matcher: its atomic conditions, then the rest in evaluation order.
pub struct Matcher {
    atoms: Vec<Cond>,
    linked: Vec<Cond>,
}

/// Compiles matcher `def` at `cx`.
pub fn compile(def: &MatcherDef, cx: &Cx, env: &mut Env) -> Result<Matcher, RuleError> {
    let (mut atoms, mut linked) = (Vec::new(), Vec::new());
    def.compile_phase(Phase::Keys, cx, env, &mut atoms)?;
    def.compile_phase(Phase::Atom, cx, env, &mut atoms)?;
    def.compile_phase(Phase::Capture, cx, env, &mut linked)?;
    def.compile_phase(Phase::Linked, cx, env, &mut linked)?;
    Ok(Matcher { atoms, linked })
}

/// Does op `id` satisfy `mt`? Captures are added to `caps` only when it does.
pub fn matches(m: &Module<'_>, id: OpId, mt: &Matcher, caps: &mut Caps) -> bool {
    if !mt.atoms.iter().all(|c| c.holds(m, id, caps)) {
        return false;
    }
    // Everything below may capture: work on a copy, commit on success.
    let mut local = caps.clone();
    if !mt.linked.iter().all(|c| c.holds(m, id, &mut local)) {
        return false;
    }
    *caps = local;
    true
}

/// Every op of the module that matches, with its captures.
pub fn select(m: &Module<'_>, mt: &Matcher) -> Vec<(OpId, Caps)> {
    let mut out = Vec::new();
    for id in m.op_ids() {
        let mut caps = Caps::new();
        caps.insert("op".into(), id);
        if matches(m, id, mt, &mut caps) {
            out.push((id, caps));
        }
    }
    out
}

/// A regex a key holds, or an error pointing at it.
pub fn regex(r: &str, cx: &Cx) -> Result<Regex, RuleError> {
    Regex::new(r).map_err(|e| {
        cx.err(
            RuleErrorKind::Matcher,
            format!("bad regex `{r}`: {}", e.to_string().lines().last().unwrap_or("")),
            "this regex",
        )
    })
}

/// A glob a key holds (an opcode or dtype pattern), or an error pointing at it.
pub fn glob(p: &str, cx: &Cx) -> Result<globset::GlobMatcher, RuleError> {
    globset::Glob::new(p)
        .map(|g| g.compile_matcher())
        .map_err(|e| cx.err(RuleErrorKind::Matcher, format!("bad pattern `{p}`: {e}"), "here"))
}

/// Does the rule read HLO alone (where XLA's own vocabulary can be checked)?
pub fn hlo_only(layers: &[Layer]) -> bool {
    layers.iter().all(|l| *l == Layer::Hlo)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Derived from the kinds, so a new key needs no edit here: the whole list, as pack authors read it in an
    /// unknown key's error, is pinned by the snapshot `pack_error_unknown_key` (`tests/it/rules.rs`).
    #[test]
    fn each_key_belongs_to_one_kind_and_the_list_keeps_its_order() {
        let keys = MatcherDef::keys();
        let mut sorted = keys.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), keys.len(), "a key owned by two kinds: {keys:?}");
        // the order pack authors read in errors and the schema: atoms, relations, composites, the capture, the walk
        let rank = |p: Phase| match p {
            Phase::Atom => 0,
            Phase::Linked => 1,
            Phase::Capture => 2,
            Phase::Keys => 3,
        };
        let kinds = MatcherDef::kinds();
        assert!(
            kinds.windows(2).all(|w| rank(w[0].0) <= rank(w[1].0)),
            "kinds! lists atoms, then linked kinds, the capture, the walk's keys: {kinds:?}"
        );
        // rules/README.md documents every key, and the linked keys its evaluation order names in the kinds' order
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/rules/README.md")).unwrap();
        for key in keys {
            let documented = readme.contains(&format!("`{key}`")) || readme.contains(&format!("`{key}:"));
            assert!(documented, "`{key}` is not in rules/README.md");
        }
        let at = readme.find("Evaluation order:").expect("rules/README.md states the evaluation order");
        let order = &readme[at..readme[at..].find("\n\n").map_or(readme.len(), |n| at + n)];
        let linked = kinds.iter().filter(|(p, _)| *p == Phase::Linked).flat_map(|(_, k)| k.iter());
        let named: Vec<usize> = linked.filter_map(|k| order.find(&format!("`{k}`"))).collect();
        assert!(named.len() >= 2 && named.is_sorted(), "rules/README.md's evaluation order: {order}");
    }

    #[test]
    fn a_matcher_reads_its_keys_through_its_kinds() {
        let def: MatcherDef = serde_norway::from_str(
            "{ op: [dot], operand: { index: 1, through: [bitcast], op: convert }, not: { name: x } }",
        )
        .unwrap();
        assert_eq!(def.op.op.items(), ["dot"]);
        let operand = def.relation.operand.as_ref().unwrap();
        assert_eq!(
            (operand.walk.index, operand.walk.through.as_slice()),
            (Some(1), ["bitcast".to_string()].as_slice())
        );
        assert_eq!(def.composite.not.as_ref().unwrap().name.name.as_deref(), Some("x"));
        let dup = serde_norway::from_str::<MatcherDef>("{ op: dot, op: convert }").unwrap_err().to_string();
        assert!(dup.contains("duplicate"), "{dup}");
        let bad = serde_norway::from_str::<MatcherDef>("dot").unwrap_err().to_string();
        assert!(bad.contains("expected struct MatcherDef"), "{bad}");
    }
}

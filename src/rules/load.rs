//! Pack resolution: built-in packs embedded from `rules/*.yaml` and user packs by path; `extends` resolved
//! relative to the pack that extends (cycles are errors); each pack's rules compiled (`compile.rs`) into one
//! [`RuleSet`] where ids and codes are unique. Every error is a miette diagnostic pointing into the YAML.

use super::compile;
use super::error::{Cx, RuleError, RuleErrorKind, Source};
use super::model::*;
use super::schema::*;
use miette::SourceSpan;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The built-in packs: (name, YAML).
pub static BUILTIN: &[(&str, &str)] = &[
    ("core", include_str!("../../rules/core.yaml")),
    ("v1-auto", include_str!("../../rules/v1-auto.yaml")),
    ("v2-dma", include_str!("../../rules/v2-dma.yaml")),
    ("v3-smem", include_str!("../../rules/v3-smem.yaml")),
];

/// A pack as loaded (for `hlolint rules`).
#[derive(Debug, serde::Serialize)]
pub struct PackInfo {
    pub name: String,
    pub description: String,
    pub origin: Origin,
    pub extends: Vec<String>,
    /// The rules it defines itself (not those it extends).
    pub rules: Vec<String>,
}

/// The rules selected for a run, in pack order, each once.
pub struct RuleSet {
    pub packs: Vec<PackInfo>,
    pub rules: Vec<Rule>,
}

impl RuleSet {
    pub fn rule(&self, key: &str) -> Option<&Rule> {
        let k = key.trim();
        self.rules.iter().find(|r| r.id == k || r.code.as_deref().is_some_and(|c| c.eq_ignore_ascii_case(k)))
    }
}

/// Loads the packs named by `specs` (built-in names or paths; comma lists allowed), with what they extend.
pub fn load(specs: &[String]) -> Result<RuleSet, RuleError> {
    let mut set = RuleSet { packs: Vec::new(), rules: Vec::new() };
    let mut stack = Vec::new();
    // `none`: no rules at all (summaries only)
    for spec in specs.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty() && *s != "none") {
        load_one(spec, None, &mut set, &mut stack)?;
    }
    Ok(set)
}

/// Every built-in pack with everything it extends.
pub fn load_all_builtin() -> Result<RuleSet, RuleError> {
    load(&BUILTIN.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>())
}

fn resolve(spec: &str, base: Option<&Path>) -> Result<(Origin, String), RuleError> {
    if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == spec) {
        return Ok((Origin::Builtin(name.to_string()), text.to_string()));
    }
    let path = match base {
        Some(b) if Path::new(spec).is_relative() => b.join(spec),
        _ => PathBuf::from(spec),
    };
    if path.is_file() {
        let text = std::fs::read_to_string(&path).map_err(|e| {
            RuleError::plain(RuleErrorKind::Unreadable, format!("cannot read rule pack {}: {e}", path.display()), None)
        })?;
        return Ok((Origin::File(path), text));
    }
    let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
    let mean = crate::suggest::hint(spec, names.iter().copied()).map(|h| format!("{h} ")).unwrap_or_default();
    Err(RuleError::plain(
        RuleErrorKind::UnknownPack,
        format!("unknown rule pack `{spec}`"),
        Some(format!("{mean}built-in packs: {}; or give the path of a YAML pack", names.join(", "))),
    ))
}

fn key_of(o: &Origin) -> String {
    match o {
        Origin::Builtin(n) => format!("builtin:{n}"),
        Origin::File(p) => format!("file:{}", p.canonicalize().unwrap_or(p.clone()).display()),
    }
}

/// Loads pack `spec` and what it extends; `from` is the `extends` entry that named it.
fn load_one(spec: &str, from: Option<&Cx>, set: &mut RuleSet, stack: &mut Vec<String>) -> Result<(), RuleError> {
    let (origin, text) = resolve_extended(spec, from)?;
    let key = key_of(&origin);
    if stack.contains(&key) {
        return Err(extends_cycle(from, stack, &key));
    }
    if set.packs.iter().any(|p| key_of(&p.origin) == key) {
        return Ok(()); // already loaded (two packs extend the same one)
    }
    let file = parse_pack(&origin, &text)?;
    stack.push(key);
    let src = Source { origin: &origin, text: &text };
    for (i, e) in file.extends.iter().enumerate() {
        load_one(e, Some(&Cx::root(src).at("extends").item(i)), set, stack)?;
    }
    stack.pop();
    let ids = add_rules(file.rules, &file.pack, src, set)?;
    set.packs.push(PackInfo {
        name: file.pack,
        description: file.description,
        origin,
        extends: file.extends,
        rules: ids,
    });
    Ok(())
}

/// Resolves `spec` relative to the pack that extends it; an error then points at that pack's `extends` entry.
fn resolve_extended(spec: &str, from: Option<&Cx>) -> Result<(Origin, String), RuleError> {
    let base = match from.map(|cx| cx.src.origin) {
        Some(Origin::File(p)) => p.parent().map(Path::to_path_buf),
        _ => None,
    };
    resolve(spec, base.as_deref()).map_err(|e| match from {
        Some(cx) => {
            let at = cx.err(e.kind, e.message, "extended here");
            RuleError { help: e.help, ..at }
        }
        None => e,
    })
}

fn extends_cycle(from: Option<&Cx>, stack: &[String], key: &str) -> RuleError {
    let mut chain: Vec<String> = stack.to_vec();
    chain.push(key.to_string());
    let message = format!("cycle in `extends`: {}", chain.join(" → "));
    let help = "a pack may extend another only once along any chain";
    match from {
        Some(cx) => {
            cx.err(RuleErrorKind::ExtendsCycle, message, "extends a pack that extends this one").with_help(help)
        }
        // the first pack of a run extends nothing yet: it cannot close a cycle
        None => RuleError::plain(RuleErrorKind::ExtendsCycle, message, Some(help.into())),
    }
}

fn parse_pack(origin: &Origin, text: &str) -> Result<PackFile, RuleError> {
    let src = || Source { origin, text }.named();
    if let Some(at) = too_deep(text) {
        return Err(RuleError {
            kind: RuleErrorKind::Syntax,
            message: format!("invalid rule pack: brackets nested deeper than {MAX_FLOW_DEPTH}"),
            src: Some(src()),
            span: Some((at, 1).into()),
            label: "too deep here".into(),
            help: Some("a rule pack needs a handful of levels; this is not a rule pack".into()),
        });
    }
    serde_norway::from_str(text).map_err(|e| {
        let span = e.location().map(|l| SourceSpan::from((l.index().min(text.len().saturating_sub(1)), 1)));
        RuleError {
            kind: RuleErrorKind::Syntax,
            message: format!("invalid rule pack: {}", strip_location(&e.to_string())),
            src: Some(src()),
            span,
            label: "here".into(),
            help: Some("see rules/README.md for the schema; `hlolint rules` lists the built-in packs".into()),
        }
    })
}

/// Compiles a pack's rules into `set`, refusing an id or code another rule already has; returns the new ids.
fn add_rules(defs: Vec<RuleDef>, pack: &str, src: Source, set: &mut RuleSet) -> Result<Vec<String>, RuleError> {
    let mut ids = Vec::new();
    // ids and codes already taken, by index into `set.rules`: a pack of n rules loads in O(n), not O(n²)
    let (mut by_id, mut by_code) = (HashMap::new(), HashMap::new());
    for (k, r) in set.rules.iter().enumerate() {
        by_id.insert(r.id.clone(), k);
        if let Some(c) = &r.code {
            by_code.insert(c.clone(), k);
        }
    }
    for (i, def) in defs.into_iter().enumerate() {
        let cx = Cx::root(src).at("rules").item(i);
        let rule = compile::rule(def, pack, src.origin, &cx)?;
        let prev = by_id.get(&rule.id).or_else(|| rule.code.as_ref().and_then(|c| by_code.get(c)));
        if let Some(prev) = prev.map(|&k| &set.rules[k]) {
            return Err(cx
                .at("id")
                .err(
                    RuleErrorKind::Duplicate,
                    format!(
                        "duplicate rule `{}`: already defined by pack `{}` ({})",
                        rule.title(),
                        prev.pack,
                        prev.origin.display()
                    ),
                    "defined again here",
                )
                .with_help("rule ids and codes are unique across the packs of a run"));
        }
        ids.push(rule.id.clone());
        by_id.insert(rule.id.clone(), set.rules.len());
        if let Some(c) = &rule.code {
            by_code.insert(c.clone(), set.rules.len());
        }
        set.rules.push(rule);
    }
    Ok(ids)
}

/// Deeper `[`/`{` nesting than any pack needs: the YAML parser takes time quadratic in it.
const MAX_FLOW_DEPTH: usize = 256;

/// The offset of the bracket that nests past [`MAX_FLOW_DEPTH`], counting every bracket (also inside strings:
/// text with that many unclosed brackets is no pack either).
fn too_deep(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_FLOW_DEPTH {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// serde_norway appends "at line L column C"; the diagnostic shows the place itself.
fn strip_location(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RuleErrorKind::*;

    fn kind_of(yaml: &str) -> RuleErrorKind {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("mine.yaml");
        std::fs::write(&p, yaml).unwrap();
        match load(&[p.display().to_string()]) {
            Ok(_) => panic!("loaded:\n{yaml}"),
            Err(e) => e.kind,
        }
    }

    const HEAD: &str = "pack: mine\nrules:\n  - id: my-rule\n    layer: hlo\n    message: \"{op.name}\"\n";

    #[test]
    fn every_error_names_its_cause() {
        let cases = [
            (format!("{HEAD}    select: {{ op: dot, operandz: {{ op: convert }} }}\n"), Syntax),
            ("pack: [unclosed\n".to_string(), Syntax),
            (format!("pack: x\nrules: {}{}\n", "[".repeat(300), "]".repeat(300)), Syntax),
            (format!("{HEAD}    select: {{ op: dot, name: \"(unclosed\" }}\n"), Matcher),
            (format!("{HEAD}    select: {{ op: dotproduct }}\n"), Matcher),
            (format!("{HEAD}    select: {{ op: dot, through: [bitcast] }}\n"), Matcher),
            (format!("{HEAD}    select: {{ op: convert, to: fp8 }}\n"), Matcher),
            ("pack: mine\nrules:\n  - id: my-rule\n    layer: hlo\n    select: { op: dot }\n    message: \"{upcast.name}\"\n".into(), Template),
            ("pack: mine\nrules:\n  - id: my-rule\n    layer: mosaic\n    analysis: dma-balanse\n    message: x\n".into(), Analysis),
            ("pack: mine\nrules:\n  - id: my-rule\n    layer: mosaic\n    analysis: dma-balance\n    when: { kind: \"never-waitted\" }\n    message: x\n".into(), Analysis),
            ("pack: mine\nextends: [core, v9-magic]\nrules: []\n".into(), UnknownPack),
            ("pack: mine\nextends: [core]\nrules:\n  - id: fp8-upcast-before-dot\n    layer: hlo\n    select: { op: dot }\n    message: x\n".into(), Duplicate),
            ("pack: mine\nrules:\n  - id: my rule\n    layer: hlo\n    select: { op: dot }\n    message: x\n".into(), RuleShape),
            ("pack: mine\nrules:\n  - id: my-rule\n    severity: fatal\n    layer: hlo\n    select: { op: dot }\n    message: x\n".into(), RuleShape),
            ("pack: mine\nrules:\n  - id: my-rule\n    layer: hlo\n    message: x\n".into(), RuleShape),
            ("pack: mine\nrules:\n  - id: my-rule\n    layer: xla\n    select: { op: dot }\n    message: x\n".into(), Layer),
        ];
        for (yaml, kind) in cases {
            assert_eq!(kind_of(&yaml), kind, "{yaml}");
        }
    }

    /// serde_norway's positions are bytes, saphyr-parser's characters (`position.rs` converts them): after
    /// non-ASCII text they differ.
    #[test]
    fn an_error_after_non_ascii_text_points_at_its_key() {
        let yaml = "pack: mine\ndescription: fp8 → bf16 — widened\nrules:\n  - id: r\n    layer: hlo\n    select: { op: dot, bogus: 1 }\n    message: x\n";
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("mine.yaml");
        std::fs::write(&p, yaml).unwrap();
        let e = load(&[p.display().to_string()]).err().unwrap();
        assert!(yaml[e.span.unwrap().offset()..].starts_with("bogus"), "{e:?}");
        std::fs::write(&p, yaml.replace("bogus: 1", "name: \"(x\"")).unwrap();
        let e = load(&[p.display().to_string()]).err().unwrap();
        let span = e.span.unwrap();
        assert_eq!(&yaml.replace("bogus: 1", "name: \"(x\"")[span.offset()..span.offset() + span.len()], "(x");
    }

    #[test]
    fn a_pack_extending_itself_is_a_cycle() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.yaml"), "pack: a\nextends: [b.yaml]\nrules: []\n").unwrap();
        std::fs::write(tmp.path().join("b.yaml"), "pack: b\nextends: [a.yaml]\nrules: []\n").unwrap();
        let e = load(&[tmp.path().join("a.yaml").display().to_string()]).err().unwrap();
        assert_eq!(e.kind, ExtendsCycle);
        assert!(e.span.is_some(), "points at the `extends` entry");
    }

    #[test]
    fn a_missing_pack_is_unknown_and_a_folder_unreadable() {
        assert_eq!(load(&["no/such/pack.yaml".into()]).err().unwrap().kind, UnknownPack);
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("bad.yaml");
        std::fs::write(&p, [0xff, 0xfe, b'\n']).unwrap();
        assert_eq!(load(&[p.display().to_string()]).err().unwrap().kind, Unreadable);
    }
}

//! Loading rule packs: built-in packs embedded from `rules/*.yaml`, user packs by path; `extends` resolved (cycles
//! are errors); every rule checked against the layers it names and compiled. Every error is a miette diagnostic
//! pointing into the YAML.

use super::families::{self, check_op_name, MOSAIC_SPACES};
use super::model::*;
use super::schema::*;
use crate::analysis::{Analysis, Options};
use crate::ir::Layer;
use miette::{Diagnostic, NamedSource, SourceSpan};
use regex::Regex;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The built-in packs: (name, YAML).
pub static BUILTIN: &[(&str, &str)] = &[
    ("core", include_str!("../../rules/core.yaml")),
    ("v1-auto", include_str!("../../rules/v1-auto.yaml")),
    ("v2-dma", include_str!("../../rules/v2-dma.yaml")),
    ("v3-smem", include_str!("../../rules/v3-smem.yaml")),
];

/// What is wrong with a rule pack: the cause, for callers and tests; the message, span and help for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleErrorKind {
    /// The pack file exists but cannot be read.
    Unreadable,
    /// Neither a built-in pack nor a file by that name.
    UnknownPack,
    /// `extends` leads back to a pack already on the chain.
    ExtendsCycle,
    /// Not YAML, or YAML that is not a pack (unknown keys, wrong types, nesting too deep).
    Syntax,
    /// Two rules of a run share an id or a code.
    Duplicate,
    /// A malformed id, an unknown severity, or `select`/`analysis` both or neither given.
    RuleShape,
    /// A layer that does not exist, or none.
    Layer,
    /// A matcher names what its layers do not have (op, dtype, memory space, attribute, metadata, relation key)
    /// or holds a bad regex or glob.
    Matcher,
    /// An unknown analysis, or options, captures, `when:` values or layers the analysis does not have.
    Analysis,
    /// A message, label or help template names what the rule does not capture.
    Template,
}

/// A problem in a rule pack.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{message}")]
#[diagnostic(code(hlolint::rules::invalid))]
pub struct RuleError {
    pub kind: RuleErrorKind,
    pub message: String,
    #[source_code]
    pub src: Option<NamedSource<String>>,
    #[label("{label}")]
    pub span: Option<SourceSpan>,
    pub label: String,
    #[help]
    pub help: Option<String>,
}

impl RuleError {
    fn plain(kind: RuleErrorKind, message: impl Into<String>, help: Option<String>) -> Self {
        RuleError { kind, message: message.into(), src: None, span: None, label: String::new(), help }
    }
}

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

fn load_one(
    spec: &str,
    from: Option<(&Origin, &str, usize)>,
    set: &mut RuleSet,
    stack: &mut Vec<String>,
) -> Result<(), RuleError> {
    let (origin, text) = resolve_extended(spec, from)?;
    let key = key_of(&origin);
    if stack.contains(&key) {
        return Err(extends_cycle(spec, from, stack, &key));
    }
    if set.packs.iter().any(|p| key_of(&p.origin) == key) {
        return Ok(()); // already loaded (two packs extend the same one)
    }
    let file = parse_pack(&origin, &text)?;
    stack.push(key);
    let extends_at = text.find("extends").unwrap_or(0);
    for e in &file.extends {
        load_one(e, Some((&origin, &text, extends_at)), set, stack)?;
    }
    stack.pop();
    let ids = add_rules(file.rules, &file.pack, &origin, &text, set)?;
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
fn resolve_extended(spec: &str, from: Option<(&Origin, &str, usize)>) -> Result<(Origin, String), RuleError> {
    let base = match from {
        Some((Origin::File(p), ..)) => p.parent().map(Path::to_path_buf),
        _ => None,
    };
    resolve(spec, base.as_deref()).map_err(|mut e| {
        if let Some((o, t, at)) = from {
            e.span = locate(t, at, spec).map(Into::into);
            e.label = "extended here".into();
            e.src = Some(NamedSource::new(o.display(), t.to_string()));
        }
        e
    })
}

fn extends_cycle(spec: &str, from: Option<(&Origin, &str, usize)>, stack: &[String], key: &str) -> RuleError {
    let (o, t, at) = from.expect("a cycle needs an extending pack");
    let mut chain: Vec<String> = stack.to_vec();
    chain.push(key.to_string());
    RuleError {
        kind: RuleErrorKind::ExtendsCycle,
        message: format!("cycle in `extends`: {}", chain.join(" → ")),
        src: Some(NamedSource::new(o.display(), t.to_string())),
        span: locate(t, at, spec).map(Into::into),
        label: "extends a pack that extends this one".into(),
        help: Some("a pack may extend another only once along any chain".into()),
    }
}

fn parse_pack(origin: &Origin, text: &str) -> Result<PackFile, RuleError> {
    let src = || NamedSource::new(origin.display(), text.to_string());
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
fn add_rules(
    defs: Vec<RuleDef>,
    pack: &str,
    origin: &Origin,
    text: &str,
    set: &mut RuleSet,
) -> Result<Vec<String>, RuleError> {
    let mut ids = Vec::new();
    let mut cursor = 0;
    // ids and codes already taken, by index into `set.rules`: a pack of n rules loads in O(n), not O(n²)
    let (mut by_id, mut by_code) = (HashMap::new(), HashMap::new());
    for (k, r) in set.rules.iter().enumerate() {
        by_id.insert(r.id.clone(), k);
        if let Some(c) = &r.code {
            by_code.insert(c.clone(), k);
        }
    }
    for def in defs {
        let at = find_rule(text, &def.id, cursor);
        cursor = at;
        let cx = Cx { text, origin, at };
        let rule = compile_rule(def, pack, origin, &cx)?;
        let prev = by_id.get(&rule.id).or_else(|| rule.code.as_ref().and_then(|c| by_code.get(c)));
        if let Some(prev) = prev.map(|&k| &set.rules[k]) {
            return Err(cx.err(
                RuleErrorKind::Duplicate,
                &rule.id,
                format!(
                    "duplicate rule `{}`: already defined by pack `{}` ({})",
                    rule.title(),
                    prev.pack,
                    prev.origin.display()
                ),
                "defined again here",
                Some("rule ids and codes are unique across the packs of a run".into()),
            ));
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

/// The offset of rule `id`'s definition (`id: ID`) at or after `from`.
fn find_rule(text: &str, id: &str, from: usize) -> usize {
    let mut i = from.min(text.len());
    while let Some(k) = text.get(i..).and_then(|t| t.find(id)) {
        let pos = i + k;
        let before = text[..pos].trim_end_matches([' ', '"', '\'']);
        if before.ends_with("id:") {
            return pos;
        }
        i = pos + id.len();
    }
    from
}

/// The span of `needle` at or after `from` (YAML quoting aside).
fn locate(text: &str, from: usize, needle: &str) -> Option<(usize, usize)> {
    let from = from.min(text.len());
    text.get(from..)?.find(needle).map(|k| (from + k, needle.len().max(1)))
}

/// Context for errors about one rule.
struct Cx<'t> {
    text: &'t str,
    origin: &'t Origin,
    at: usize,
}

impl Cx<'_> {
    fn err(&self, kind: RuleErrorKind, needle: &str, message: String, label: &str, help: Option<String>) -> RuleError {
        let span = locate(self.text, self.at, needle).or(Some((self.at, 1)));
        RuleError {
            kind,
            message,
            src: Some(NamedSource::new(self.origin.display(), self.text.to_string())),
            span: span.map(Into::into),
            label: label.into(),
            help,
        }
    }
}

fn parse_layers(def: &RuleDef, cx: &Cx) -> Result<Vec<Layer>, RuleError> {
    let items = def.layer.items();
    if items.is_empty() {
        return Err(cx.err(
            RuleErrorKind::Layer,
            &def.id,
            format!("rule `{}` has no `layer`", def.id),
            "this rule",
            Some("layer: hlo | stablehlo | mosaic | llo | any, or a list".into()),
        ));
    }
    let mut out = Vec::new();
    for l in items {
        match l.as_str() {
            "any" => out.extend([Layer::Hlo, Layer::StableHlo, Layer::Mosaic, Layer::Llo]),
            "hlo" => out.push(Layer::Hlo),
            "stablehlo" => out.push(Layer::StableHlo),
            "mosaic" => out.push(Layer::Mosaic),
            "llo" => out.push(Layer::Llo),
            other => {
                return Err(cx.err(
                    RuleErrorKind::Layer,
                    other,
                    format!("unknown layer `{other}` in rule `{}`", def.id),
                    "not a layer",
                    Some("layers: hlo, stablehlo, mosaic, llo, any".into()),
                ))
            }
        }
    }
    out.dedup();
    Ok(out)
}

fn compile_rule(def: RuleDef, pack: &str, origin: &Origin, cx: &Cx) -> Result<Rule, RuleError> {
    check_rule_id(&def, cx)?;
    let severity = Severity::parse(&def.severity).ok_or_else(|| {
        cx.err(
            RuleErrorKind::RuleShape,
            &def.severity,
            format!("unknown severity `{}` in rule `{}`", def.severity, def.id),
            "not a severity",
            Some("severities: error, warning, info, off".into()),
        )
    })?;
    let layers = parse_layers(&def, cx)?;
    let kind = compile_kind(&def, &layers, cx)?;
    let base = match origin {
        Origin::File(p) => p.parent().map(Path::to_path_buf).unwrap_or_default(),
        Origin::Builtin(_) => builtin_dir(),
    };
    let (valid, invalid) = match &def.tests {
        Some(t) => (t.valid.iter().map(|p| base.join(p)).collect(), t.invalid.iter().map(|p| base.join(p)).collect()),
        None => default_cases(&base, &def.id, matches!(origin, Origin::Builtin(_))),
    };
    Ok(Rule {
        id: def.id,
        code: def.code,
        severity,
        layers,
        summary: def.summary,
        kind,
        message: def.message,
        label: def.label,
        labels: def.labels.into_iter().map(|l| (l.at, l.text)).collect(),
        help: def.help,
        doc: def.doc,
        valid,
        invalid,
        pack: pack.to_string(),
        origin: origin.clone(),
    })
}

fn check_rule_id(def: &RuleDef, cx: &Cx) -> Result<(), RuleError> {
    if def.id.is_empty() || !def.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(cx.err(
            RuleErrorKind::RuleShape,
            &def.id,
            format!("rule id `{}` must be kebab-case letters, digits and dashes", def.id),
            "this id",
            None,
        ));
    }
    Ok(())
}

/// A rule is either a matcher (`select`) or a named analysis, never both nor neither.
fn compile_kind(def: &RuleDef, layers: &[Layer], cx: &Cx) -> Result<RuleKind, RuleError> {
    match (&def.select, &def.analysis) {
        (Some(_), Some(a)) => Err(cx.err(
            RuleErrorKind::RuleShape,
            a,
            format!("rule `{}` has both `select` and `analysis`", def.id),
            "one of the two",
            None,
        )),
        (Some(m), None) => compile_select(def, m, layers, cx),
        (None, Some(name)) => compile_analysis_rule(def, name, layers, cx),
        (None, None) => Err(cx.err(
            RuleErrorKind::RuleShape,
            &def.id,
            format!("rule `{}` needs `select` (a matcher) or `analysis` (a named analysis)", def.id),
            "this rule",
            None,
        )),
    }
}

fn compile_select(def: &RuleDef, m: &MatcherDef, layers: &[Layer], cx: &Cx) -> Result<RuleKind, RuleError> {
    if !def.when.is_empty() {
        return Err(cx.err(
            RuleErrorKind::RuleShape,
            "when",
            "`when` filters an analysis's hits; use the matcher for `select` rules".into(),
            "here",
            None,
        ));
    }
    let mut captures = vec!["op".to_string()];
    let matcher = compile_matcher(m, layers, cx, false, &mut captures)?;
    check_templates(def, &captures, false, cx)?;
    Ok(RuleKind::Select(Box::new(matcher)))
}

fn compile_analysis_rule(def: &RuleDef, name: &str, layers: &[Layer], cx: &Cx) -> Result<RuleKind, RuleError> {
    let a = crate::analysis::analysis(name).ok_or_else(|| {
        let names: Vec<&str> = crate::analysis::ANALYSES.iter().map(|a| a.name).collect();
        cx.err(
            RuleErrorKind::Analysis,
            name,
            format!("unknown analysis `{name}` in rule `{}`", def.id),
            "no such analysis",
            Some(format!("analyses: {}", names.join(", "))),
        )
    })?;
    check_analysis_layers(a, name, layers, cx)?;
    let options = analysis_options(def, a, name, cx)?;
    let mut captures = vec!["op".to_string()];
    captures.extend(a.captures.iter().map(|c| format!("analysis.{c}")));
    captures.push("analysis.detail".into());
    check_templates(def, &captures, true, cx)?;
    let when = analysis_when(def, a, name, cx)?;
    Ok(RuleKind::Analysis(a, options, when))
}

fn check_analysis_layers(a: &Analysis, name: &str, layers: &[Layer], cx: &Cx) -> Result<(), RuleError> {
    for l in layers {
        if !a.layers.contains(l) {
            let has: Vec<&str> = a.layers.iter().map(|l| l.name()).collect();
            return Err(cx.err(
                RuleErrorKind::Analysis,
                name,
                format!("analysis `{name}` does not read layer {} (it reads: {})", l.name(), has.join(", ")),
                "for this layer",
                None,
            ));
        }
    }
    Ok(())
}

fn analysis_options(def: &RuleDef, a: &Analysis, name: &str, cx: &Cx) -> Result<Options, RuleError> {
    let mut options = BTreeMap::new();
    for (k, v) in &def.options {
        if !a.options.iter().any(|(n, _)| n == k) {
            let known: Vec<&str> = a.options.iter().map(|(n, _)| *n).collect();
            return Err(cx.err(
                RuleErrorKind::Analysis,
                k,
                format!("analysis `{name}` has no option `{k}`"),
                "unknown option",
                Some(if known.is_empty() {
                    "it takes no options".into()
                } else {
                    format!("options: {}", known.join(", "))
                }),
            ));
        }
        let json = serde_json::to_value(v).unwrap_or(serde_json::Value::Null);
        options.insert(k.clone(), json);
    }
    Ok(options)
}

/// `when:` filters on the analysis's captures; a `kind` pattern must match one of the kinds it reports.
fn analysis_when(def: &RuleDef, a: &Analysis, name: &str, cx: &Cx) -> Result<Vec<(String, Regex)>, RuleError> {
    let mut when = Vec::new();
    for (k, r) in &def.when {
        if k != "detail" && !a.captures.contains(&k.as_str()) {
            return Err(cx.err(
                RuleErrorKind::Analysis,
                k,
                format!("analysis `{name}` has no capture `{k}`"),
                "unknown capture",
                Some(format!("captures: detail, {}", a.captures.join(", "))),
            ));
        }
        let re = regex(r, cx)?;
        if k == "kind" && !a.kinds.is_empty() && !a.kinds.iter().any(|kind| re.is_match(kind)) {
            return Err(cx.err(
                RuleErrorKind::Analysis,
                k,
                format!("`when: {{kind: {r:?}}}` matches no kind of analysis `{name}`"),
                "matches no kind",
                Some(format!("kinds: {}", a.kinds.join(", "))),
            ));
        }
        when.push((k.clone(), re));
    }
    Ok(when)
}

/// A rule without `tests:` is tested on the folders `tests/data/rules/<id>/valid` and `.../invalid` that exist,
/// looked for beside the pack file and one folder up — the layout of this repository (`rules/` beside `tests/`),
/// which a team's own packs can follow. Built-in packs look in the cases embedded in the binary.
fn default_cases(base: &Path, id: &str, builtin: bool) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let rel = format!("tests/data/rules/{id}");
    let exists = |dir: &Path, kind: &str| {
        if builtin {
            let prefix = format!("{rel}/{kind}/");
            super::embedded::CASES.iter().any(|(p, _)| p.starts_with(&prefix))
        } else {
            dir.join(&rel).join(kind).is_dir()
        }
    };
    let parent = base.join("..");
    // the embedded cases sit beside `rules/`, where the built-in packs are
    let candidates: &[&Path] = if builtin { &[parent.as_path()] } else { &[base, parent.as_path()] };
    let root = candidates.iter().copied().find(|d| exists(d, "valid") || exists(d, "invalid")).unwrap_or(base);
    let cases = |kind: &str| if exists(root, kind) { vec![root.join(&rel).join(kind)] } else { Vec::new() };
    (cases("valid"), cases("invalid"))
}

/// Where the built-in packs' test paths are relative to: `rules/` in the folder the binary writes its embedded cases
/// to (`hlolint test` writes them there; see `rules::embedded`), so an installed binary needs no source tree.
fn builtin_dir() -> PathBuf {
    super::embedded::rules_dir()
}

/// `{name}` and `{name.prop}` references in a template.
fn template_refs(t: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = t;
    while let Some(i) = rest.find('{') {
        let after = &rest[i + 1..];
        if let Some(stripped) = after.strip_prefix('{') {
            rest = stripped;
            continue;
        }
        match after.find('}') {
            Some(j) => {
                // `{a|b}`: each alternative must name something
                out.extend(after[..j].split('|').map(str::trim));
                rest = &after[j + 1..];
            }
            None => break,
        }
    }
    out
}

const GLOBALS: &[&str] =
    &["target", "target.source", "native_fp8_on", "kernel", "file", "unit", "rule.id", "rule.code"];
pub const OP_PROPS: &[&str] = &[
    "name",
    "opcode",
    "dtype",
    "from",
    "to",
    "type",
    "function",
    "memory_space",
    "rank",
    "elements",
    "source",
    "custom_call_target",
];

fn check_templates(def: &RuleDef, captures: &[String], analysis: bool, cx: &Cx) -> Result<(), RuleError> {
    let mut templates: Vec<&str> = vec![&def.message];
    templates.extend(def.label.as_deref());
    templates.extend(def.help.as_deref());
    templates.extend(def.labels.iter().map(|l| l.text.as_str()));
    for l in &def.labels {
        if !captures.iter().any(|c| c == &l.at) {
            return Err(cx.err(
                RuleErrorKind::Template,
                &l.at,
                format!("label at `{}`: no such capture in rule `{}`", l.at, def.id),
                "not captured",
                Some(format!("captures: {}", captures.join(", "))),
            ));
        }
    }
    for t in templates {
        for r in template_refs(t) {
            if GLOBALS.contains(&r) || captures.iter().any(|c| c == r) {
                continue;
            }
            let ok = match r.split_once('.') {
                Some(("analysis", _)) => analysis && captures.iter().any(|c| c == r),
                Some((cap, prop)) => {
                    captures.iter().any(|c| c == cap)
                        && (OP_PROPS.contains(&prop) || prop.starts_with("attr.") || prop.starts_with("metadata."))
                }
                None => false,
            };
            if !ok {
                let mut known: Vec<String> = captures.to_vec();
                known.extend(GLOBALS.iter().map(|s| s.to_string()));
                return Err(cx.err(
                    RuleErrorKind::Template,
                    r,
                    format!("template `{{{r}}}` in rule `{}` names nothing the rule captures", def.id),
                    "unknown placeholder",
                    Some(format!("placeholders: {}; op properties: {}", known.join(", "), OP_PROPS.join(", "))),
                ));
            }
        }
    }
    Ok(())
}

fn glob(p: &str, cx: &Cx) -> Result<globset::GlobMatcher, RuleError> {
    globset::Glob::new(p)
        .map(|g| g.compile_matcher())
        .map_err(|e| cx.err(RuleErrorKind::Matcher, p, format!("bad pattern `{p}`: {e}"), "here", None))
}

fn op_pats(names: &[String], layers: &[Layer], cx: &Cx) -> Result<Vec<OpPat>, RuleError> {
    let mut out = Vec::new();
    for n in names {
        // a name must exist in the rule's layer; a rule over several layers may name what only some of them have
        let results: Vec<Result<(), String>> = layers.iter().map(|l| check_op_name(n, *l)).collect();
        if results.iter().all(Result::is_err) {
            let msg = results.into_iter().find_map(Result::err).unwrap_or_default();
            return Err(cx.err(
                RuleErrorKind::Matcher,
                n,
                msg,
                "unknown here",
                Some("`hlolint rules --families` lists the op families per layer".into()),
            ));
        }
        match families::family(n) {
            Some(f) => out.push(OpPat::Family(f)),
            None => out.push(OpPat::Glob(glob(n, cx)?)),
        }
    }
    Ok(out)
}

fn dtype_pats(names: &[String], cx: &Cx) -> Result<Vec<DtypePat>, RuleError> {
    let mut out = Vec::new();
    for n in names {
        let lower = n.to_ascii_lowercase();
        let g = glob(&lower, cx)?;
        let any = crate::ir::DType::all().any(|d| g.is_match(d.name()));
        if !any {
            return Err(cx.err(
                RuleErrorKind::Matcher,
                n,
                format!("`{n}` matches no element type"),
                "not a dtype",
                Some(
                    "element types as HLO spells them: f8e4m3fn, f8e5m2, bf16, f32, s8, ... (globs like `f8*` allowed)"
                        .into(),
                ),
            ));
        }
        out.push(DtypePat::Glob(g));
    }
    Ok(out)
}

fn regex(r: &str, cx: &Cx) -> Result<Regex, RuleError> {
    Regex::new(r).map_err(|e| {
        cx.err(
            RuleErrorKind::Matcher,
            r,
            format!("bad regex `{r}`: {}", e.to_string().lines().last().unwrap_or("")),
            "this regex",
            None,
        )
    })
}

fn count(c: CountDef) -> Count {
    match c {
        CountDef::Exactly(n) => Count { min: n, max: n },
        CountDef::Range { min, max } => Count { min: min.unwrap_or(0), max: max.unwrap_or(u64::MAX) },
    }
}

fn compile_matcher(
    m: &MatcherDef,
    layers: &[Layer],
    cx: &Cx,
    relation: bool,
    caps: &mut Vec<String>,
) -> Result<Matcher, RuleError> {
    if !relation {
        reject_relation_keys(m, cx)?;
    }
    let mut out = Matcher { ops: op_pats(&m.op.items(), layers, cx)?, ..Default::default() };
    out.name = m.name.as_deref().map(|r| regex(r, cx)).transpose()?;
    let mut to = m.dtype.items();
    to.extend(m.to.items());
    out.dtype = dtype_pats(&to, cx)?;
    out.from = dtype_pats(&m.from.items(), cx)?;
    out.operand_dtype = dtype_pats(&m.operand_dtype.items(), cx)?;
    out.rank = m.rank.map(count);
    out.elements = m.elements.map(count);
    out.memory_space = memory_spaces(m, layers, cx)?;
    out.attr = attribute_pats(m, layers, cx)?;
    out.no_attr = absent_attributes(m, layers, cx)?;
    out.metadata = metadata_pats(m, layers, cx)?;
    out.custom_call_target = m.custom_call_target.as_deref().map(|r| regex(r, cx)).transpose()?;
    out.function = m.function.as_deref().map(|r| regex(r, cx)).transpose()?;
    if let Some(c) = &m.capture {
        register_capture(c, caps, cx)?;
        out.capture = Some(c.clone());
    }
    out.relations = compile_relations(m, layers, cx, caps)?;
    if let Some(b) = &m.scheduled_between {
        out.between = Some(compile_between(b, layers, cx, caps)?);
    }
    for a in &m.all {
        out.all.push(compile_matcher(a, layers, cx, false, caps)?);
    }
    for a in &m.any {
        out.any.push(compile_matcher(a, layers, cx, false, caps)?);
    }
    if let Some(n) = &m.not {
        out.not = Some(Box::new(compile_matcher(n, layers, cx, false, caps)?));
    }
    Ok(out)
}

/// Keys that only make sense on a relation's matcher, refused at the top of a matcher.
fn reject_relation_keys(m: &MatcherDef, cx: &Cx) -> Result<(), RuleError> {
    for (k, present) in [
        ("index", m.index.is_some()),
        ("depth", m.depth.is_some()),
        ("through", !m.through.is_empty()),
        ("count", m.count.is_some()),
        ("every", m.every),
    ] {
        if present {
            return Err(cx.err(
                RuleErrorKind::Matcher,
                k,
                format!("`{k}` belongs under a relation (operand, user, inside, precedes, follows, paired)"),
                "not a relation",
                None,
            ));
        }
    }
    Ok(())
}

fn hlo_only(layers: &[Layer]) -> bool {
    layers.iter().all(|l| *l == Layer::Hlo)
}

fn memory_spaces(m: &MatcherDef, layers: &[Layer], cx: &Cx) -> Result<Vec<String>, RuleError> {
    let mut spaces = Vec::new();
    for s in m.memory_space.items() {
        let numbered = s.starts_with("S(") || s.parse::<i64>().is_ok();
        let ok = if hlo_only(layers) { numbered } else { MOSAIC_SPACES.contains(&s.as_str()) || numbered };
        if !ok {
            return Err(cx.err(
                RuleErrorKind::Matcher,
                &s,
                format!("unknown memory space `{s}`"),
                "not a memory space",
                Some(format!("Mosaic spaces: {}; HLO spaces: S(1), S(2), ...", MOSAIC_SPACES.join(", "))),
            ));
        }
        spaces.push(s);
    }
    Ok(spaces)
}

fn attribute_pats(m: &MatcherDef, layers: &[Layer], cx: &Cx) -> Result<Vec<(String, Regex)>, RuleError> {
    let mut pats = Vec::new();
    for (k, r) in &m.attr {
        if hlo_only(layers) && !families::HLO_ATTRIBUTES.contains(&k.as_str()) {
            return Err(cx.err(
                RuleErrorKind::Matcher,
                k,
                format!("HLO has no attribute `{k}`"),
                "unknown attribute",
                Some("HLO attributes are XLA's (custom_call_target, backend_config, dimensions, ...)".into()),
            ));
        }
        pats.push((k.clone(), regex(r, cx)?));
    }
    Ok(pats)
}

fn absent_attributes(m: &MatcherDef, layers: &[Layer], cx: &Cx) -> Result<Vec<String>, RuleError> {
    let mut names = Vec::new();
    for k in &m.no_attr {
        if hlo_only(layers) && !families::HLO_ATTRIBUTES.contains(&k.as_str()) {
            return Err(cx.err(
                RuleErrorKind::Matcher,
                k,
                format!("HLO has no attribute `{k}`"),
                "unknown attribute",
                None,
            ));
        }
        names.push(k.clone());
    }
    Ok(names)
}

fn metadata_pats(m: &MatcherDef, layers: &[Layer], cx: &Cx) -> Result<Vec<(String, Regex)>, RuleError> {
    let mut pats = Vec::new();
    for (k, r) in &m.metadata {
        if !["op_name", "op_type", "source_file", "source_line", "source"].contains(&k.as_str()) {
            return Err(cx.err(
                RuleErrorKind::Matcher,
                k,
                format!("unknown metadata field `{k}`"),
                "here",
                Some(
                    "metadata fields: op_name, op_type, source_file, source_line, source (file:line of the stack)"
                        .into(),
                ),
            ));
        }
        if !layers.contains(&Layer::Hlo) {
            return Err(cx.err(
                RuleErrorKind::Matcher,
                k,
                "`metadata` is HLO's; this rule's layers have none".into(),
                "here",
                None,
            ));
        }
        pats.push((k.clone(), regex(r, cx)?));
    }
    Ok(pats)
}

fn register_capture(c: &String, caps: &mut Vec<String>, cx: &Cx) -> Result<(), RuleError> {
    if caps.contains(c) || c == "analysis" || GLOBALS.contains(&c.as_str()) {
        return Err(cx.err(
            RuleErrorKind::Matcher,
            c,
            format!("capture name `{c}` is used twice or reserved"),
            "here",
            None,
        ));
    }
    caps.push(c.clone());
    Ok(())
}

fn compile_relations(
    m: &MatcherDef,
    layers: &[Layer],
    cx: &Cx,
    caps: &mut Vec<String>,
) -> Result<Vec<Relation>, RuleError> {
    let rels: [(RelKind, &Option<Box<MatcherDef>>); 6] = [
        (RelKind::Operand, &m.operand),
        (RelKind::User, &m.user),
        (RelKind::Inside, &m.inside),
        (RelKind::Precedes, &m.precedes),
        (RelKind::Follows, &m.follows),
        (RelKind::Paired, &m.paired),
    ];
    let mut out = Vec::new();
    for (kind, def) in rels {
        let Some(d) = def else { continue };
        out.push(compile_relation(kind, d, layers, cx, caps)?);
    }
    Ok(out)
}

fn compile_relation(
    kind: RelKind,
    d: &MatcherDef,
    layers: &[Layer],
    cx: &Cx,
    caps: &mut Vec<String>,
) -> Result<Relation, RuleError> {
    let sub = compile_matcher(d, layers, cx, true, caps)?;
    let through = ThroughList::split(&d.through);
    let through_ops = op_pats(&through.ops, layers, cx)?;
    if d.index.is_some() && kind != RelKind::Operand {
        return Err(cx.err(
            RuleErrorKind::Matcher,
            "index",
            format!("`index` applies to `operand`, not `{}`", kind.key()),
            "here",
            None,
        ));
    }
    Ok(Relation {
        kind,
        matcher: sub,
        index: d.index,
        depth: d.depth.unwrap_or(if kind == RelKind::Inside { 64 } else { 1 }).min(64),
        through: through_ops,
        through_fusion_parameter: through.fusion_parameter,
        through_fusion: through.fusion,
        count: d.count.map(count).unwrap_or(Count::AT_LEAST_ONE),
        every: d.every,
    })
}

/// A relation's `through:` list: the two structural keywords, and op names for the rest.
struct ThroughList {
    ops: Vec<String>,
    fusion_parameter: bool,
    fusion: bool,
}

impl ThroughList {
    fn split(items: &[String]) -> Self {
        let mut t = ThroughList { ops: Vec::new(), fusion_parameter: false, fusion: false };
        for item in items {
            match item.as_str() {
                "fusion-parameter" => t.fusion_parameter = true,
                "fusion" | "call" => t.fusion = true,
                _ => t.ops.push(item.clone()),
            }
        }
        t
    }
}

fn compile_between(b: &BetweenDef, layers: &[Layer], cx: &Cx, caps: &[String]) -> Result<Between, RuleError> {
    if !caps.contains(&b.and) {
        return Err(cx.err(
            RuleErrorKind::Matcher,
            &b.and,
            format!("`scheduled_between.and`: `{}` is not captured before it", b.and),
            "not captured",
            Some(format!("captures so far: {}", caps.join(", "))),
        ));
    }
    Ok(Between {
        and: b.and.clone(),
        count: count(b.count),
        ignore: op_pats(&b.ignore, layers, cx)?,
        independent_work: b.independent_work,
    })
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

//! A rule as written ([`RuleDef`]) compiled into a [`Rule`]: its id, severity and layers checked, its matcher
//! compiled (`matcher/`) or its analysis looked up with its options and `when:` filters, its templates checked
//! (`template.rs`), its test cases found. Every error points at the key or value it is about.

use super::error::{Cx, RuleError, RuleErrorKind};
use super::matcher::{self, Env};
use super::model::*;
use super::schema::*;
use super::template;
use crate::analysis::{Analysis, Options};
use crate::ir::Layer;
use regex::Regex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Compiles rule `def` of pack `pack`, written at `cx` (`rules[i]`).
pub fn rule(def: RuleDef, pack: &str, origin: &Origin, cx: &Cx) -> Result<Rule, RuleError> {
    check_id(&def, cx)?;
    let severity = Severity::parse(&def.severity).ok_or_else(|| {
        cx.at("severity")
            .err(
                RuleErrorKind::RuleShape,
                format!("unknown severity `{}` in rule `{}`", def.severity, def.id),
                "not a severity",
            )
            .with_help("severities: error, warning, info, off")
    })?;
    let layers = layers(&def, cx)?;
    let kind = kind(&def, &layers, cx)?;
    let base = match origin {
        Origin::File(p) => p.parent().map(Path::to_path_buf).unwrap_or_default(),
        Origin::Builtin(_) => super::embedded::rules_dir(),
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

fn check_id(def: &RuleDef, cx: &Cx) -> Result<(), RuleError> {
    if def.id.is_empty() || !def.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(cx.at("id").err(
            RuleErrorKind::RuleShape,
            format!("rule id `{}` must be kebab-case letters, digits and dashes", def.id),
            "this id",
        ));
    }
    Ok(())
}

fn layers(def: &RuleDef, cx: &Cx) -> Result<Vec<Layer>, RuleError> {
    let items = def.layer.items();
    if items.is_empty() {
        return Err(cx
            .at("id")
            .err(RuleErrorKind::Layer, format!("rule `{}` has no `layer`", def.id), "this rule")
            .with_help("layer: hlo | stablehlo | mosaic | llo | any, or a list"));
    }
    let mut out = Vec::new();
    for (i, l) in items.iter().enumerate() {
        match l.as_str() {
            "any" => out.extend([Layer::Hlo, Layer::StableHlo, Layer::Mosaic, Layer::Llo]),
            "hlo" => out.push(Layer::Hlo),
            "stablehlo" => out.push(Layer::StableHlo),
            "mosaic" => out.push(Layer::Mosaic),
            "llo" => out.push(Layer::Llo),
            other => {
                return Err(cx
                    .at("layer")
                    .one_of(i, def.layer.is_many())
                    .err(RuleErrorKind::Layer, format!("unknown layer `{other}` in rule `{}`", def.id), "not a layer")
                    .with_help("layers: hlo, stablehlo, mosaic, llo, any"))
            }
        }
    }
    out.dedup();
    Ok(out)
}

/// A rule is either a matcher (`select`) or a named analysis, never both nor neither.
fn kind(def: &RuleDef, layers: &[Layer], cx: &Cx) -> Result<RuleKind, RuleError> {
    match (&def.select, &def.analysis) {
        (Some(_), Some(_)) => Err(cx.at("analysis").err(
            RuleErrorKind::RuleShape,
            format!("rule `{}` has both `select` and `analysis`", def.id),
            "one of the two",
        )),
        (Some(m), None) => select(def, m, layers, cx),
        (None, Some(name)) => analysis(def, name, layers, cx),
        (None, None) => Err(cx.at("id").err(
            RuleErrorKind::RuleShape,
            format!("rule `{}` needs `select` (a matcher) or `analysis` (a named analysis)", def.id),
            "this rule",
        )),
    }
}

fn select(def: &RuleDef, m: &matcher::MatcherDef, layers: &[Layer], cx: &Cx) -> Result<RuleKind, RuleError> {
    if !def.when.is_empty() {
        return Err(cx.at("when").err_key(
            RuleErrorKind::RuleShape,
            "`when` filters an analysis's hits; use the matcher for `select` rules".into(),
            "here",
        ));
    }
    let mut captures = vec!["op".to_string()];
    let env = &mut Env { layers, caps: &mut captures, relation: false };
    let compiled = matcher::compile(m, &cx.at("select"), env)?;
    template::check(def, &captures, false, cx)?;
    Ok(RuleKind::Select(Box::new(compiled)))
}

fn analysis(def: &RuleDef, name: &str, layers: &[Layer], cx: &Cx) -> Result<RuleKind, RuleError> {
    let at = cx.at("analysis");
    let a = crate::analysis::analysis(name).ok_or_else(|| {
        let names: Vec<&str> = crate::analysis::ANALYSES.iter().map(|a| a.name).collect();
        at.err(RuleErrorKind::Analysis, format!("unknown analysis `{name}` in rule `{}`", def.id), "no such analysis")
            .with_help(format!("analyses: {}", names.join(", ")))
    })?;
    for l in layers {
        if !a.layers.contains(l) {
            let has: Vec<&str> = a.layers.iter().map(|l| l.name()).collect();
            return Err(at.err(
                RuleErrorKind::Analysis,
                format!("analysis `{name}` does not read layer {} (it reads: {})", l.name(), has.join(", ")),
                "for this layer",
            ));
        }
    }
    let options = options(def, a, name, cx)?;
    let mut captures = vec!["op".to_string()];
    captures.extend(a.captures.iter().map(|c| format!("analysis.{c}")));
    captures.push("analysis.detail".into());
    template::check(def, &captures, true, cx)?;
    let when = when(def, a, name, cx)?;
    Ok(RuleKind::Analysis(a, options, when))
}

fn options(def: &RuleDef, a: &Analysis, name: &str, cx: &Cx) -> Result<Options, RuleError> {
    let mut options = BTreeMap::new();
    for (k, v) in &def.options {
        if !a.options.iter().any(|(n, _)| n == k) {
            let known: Vec<&str> = a.options.iter().map(|(n, _)| *n).collect();
            return Err(cx
                .at("options")
                .at(k)
                .err_key(RuleErrorKind::Analysis, format!("analysis `{name}` has no option `{k}`"), "unknown option")
                .with_help(if known.is_empty() {
                    "it takes no options".into()
                } else {
                    format!("options: {}", known.join(", "))
                }));
        }
        let json = serde_json::to_value(v).unwrap_or(serde_json::Value::Null);
        options.insert(k.clone(), json);
    }
    Ok(options)
}

/// `when:` filters on the analysis's captures; a `kind` pattern must match one of the kinds it reports.
fn when(def: &RuleDef, a: &Analysis, name: &str, cx: &Cx) -> Result<Vec<(String, Regex)>, RuleError> {
    let mut when = Vec::new();
    for (k, r) in &def.when {
        let at = cx.at("when").at(k);
        if k != "detail" && !a.captures.contains(&k.as_str()) {
            return Err(at
                .err_key(RuleErrorKind::Analysis, format!("analysis `{name}` has no capture `{k}`"), "unknown capture")
                .with_help(format!("captures: detail, {}", a.captures.join(", "))));
        }
        let re = matcher::regex(r, &at)?;
        if k == "kind" && !a.kinds.is_empty() && !a.kinds.iter().any(|kind| re.is_match(kind)) {
            return Err(at
                .err_key(
                    RuleErrorKind::Analysis,
                    format!("`when: {{kind: {r:?}}}` matches no kind of analysis `{name}`"),
                    "matches no kind",
                )
                .with_help(format!("kinds: {}", a.kinds.join(", "))));
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

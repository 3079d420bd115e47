//! `hlolint rules` (list packs and rules, the pack schema), `hlolint explain RULE` (a rule's documentation);
//! `hlolint test` is `rules_test.rs`.

use super::usage::UsageError;
use crate::rules::model::RuleKind;
use crate::rules::{self, RuleSet};

pub use super::rules_test::{test, TestArgs};
use std::fmt::Write;

#[derive(Debug, clap::Args)]
pub struct RulesArgs {
    /// Packs to list (default: every built-in pack); paths to your own packs work too.
    #[arg(long, short = 'r', value_name = "PACK")]
    pub rules: Vec<String>,
    /// List the op families rules may name, per layer, instead.
    #[arg(long)]
    pub families: bool,
    /// List the named analyses rules may call, instead.
    #[arg(long)]
    pub analyses: bool,
    #[arg(long)]
    pub json: bool,
    /// Print every rule's documentation as Markdown (docs/rules.md is made with this).
    #[arg(long)]
    pub docs: bool,
    /// Print the JSON schema of rule packs (rules/schema.json, which editors validate packs with).
    #[arg(long)]
    pub schema: bool,
    #[command(flatten)]
    pub cfg: super::ConfigArgs,
}

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// A rule id (`fp8-upcast-before-dot`), code (`HL001`) or analysis name.
    pub rule: String,
    /// Also look in these packs (paths); the built-in packs and the configuration's are always searched.
    #[arg(long, short = 'r', value_name = "PACK")]
    pub rules: Vec<String>,
    #[command(flatten)]
    pub cfg: super::ConfigArgs,
}

/// The packs the configuration in the current directory names (`--config`, `--isolated` as for `check`).
pub(super) fn config_packs(cfg: &super::ConfigArgs) -> Result<Vec<String>, i32> {
    cfg.packs().map_err(|e| {
        eprintln!("{}", crate::report::excerpt::render(&e));
        2
    })
}

pub(super) fn load_or_all(specs: &[String]) -> Result<RuleSet, i32> {
    let r = if specs.is_empty() { rules::load::load_all_builtin() } else { rules::load(specs) };
    r.map_err(|e| {
        eprintln!("{:?}", miette::Report::new(e));
        2
    })
}

fn layers(r: &rules::Rule) -> String {
    if r.layers.len() == 4 {
        "any".into()
    } else {
        r.layers.iter().map(|l| l.name()).collect::<Vec<_>>().join(",")
    }
}

pub fn rules(args: &RulesArgs) -> i32 {
    if args.families {
        crate::out!("{}", families_listing());
        return 0;
    }
    if args.analyses {
        print_analyses();
        return 0;
    }
    if args.schema {
        crate::out!("{}", rules::schema::json_schema());
        return 0;
    }
    if args.docs {
        return match load_or_all(&args.rules) {
            Ok(set) => {
                crate::out!("{}", docs(&set));
                0
            }
            Err(code) => code,
        };
    }
    let mut specs = args.rules.clone();
    if specs.is_empty() {
        // every built-in pack, and the configuration's own
        specs = rules::load::BUILTIN.iter().map(|(n, _)| n.to_string()).collect();
        match config_packs(&args.cfg) {
            Ok(p) => specs.extend(p),
            Err(code) => return code,
        }
    }
    let set = match load_or_all(&specs) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if args.json {
        crate::outln!("{}", rules_json(&set));
    } else {
        crate::out!("{}", rules_listing(&set));
    }
    0
}

/// `rules --families`: each op family and its patterns per layer.
fn families_listing() -> String {
    let mut out = String::new();
    for f in rules::families::FAMILIES {
        let _ = writeln!(out, "{:<22} {}", f.name, f.doc);
        for l in [crate::ir::Layer::Hlo, crate::ir::Layer::StableHlo, crate::ir::Layer::Mosaic, crate::ir::Layer::Llo] {
            let p = f.patterns(l);
            if !p.is_empty() {
                let _ = writeln!(out, "  {:<10} {}", l.name(), p.join(" "));
            }
        }
    }
    out
}

/// `rules --analyses`: each named analysis, its layers and the first sentence of its doc.
fn print_analyses() {
    for a in crate::analysis::ANALYSES {
        let ls: Vec<&str> = a.layers.iter().map(|l| l.name()).collect();
        crate::outln!("{:<24} [{}] {}", a.name, ls.join(","), a.doc.split(". ").next().unwrap_or(a.doc));
    }
}

fn rules_json(set: &RuleSet) -> String {
    let rules: Vec<serde_json::Value> = set
        .rules
        .iter()
        .map(|r| {
            serde_json::json!({"id": r.id, "code": r.code, "severity": r.severity, "layers": layers(r), "pack": r.pack, "summary": r.summary,
                "analysis": match &r.kind { RuleKind::Analysis(a, ..) => Some(a.name), _ => None }})
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({"packs": set.packs, "rules": rules})).unwrap_or_default()
}

/// The plain listing: each pack, then one line per rule.
fn rules_listing(set: &RuleSet) -> String {
    let mut out = String::new();
    for p in &set.packs {
        let ext = if p.extends.is_empty() { String::new() } else { format!(" (extends {})", p.extends.join(", ")) };
        let _ = writeln!(out, "{}{ext} — {}", p.name, p.description.trim());
        let _ = writeln!(out, "  from {}", p.origin.display());
        for id in &p.rules {
            let Some(r) = set.rule(id) else { continue };
            let _ = writeln!(
                out,
                "  {:<6} {:<28} {:<8} {:<16} {}",
                r.code.as_deref().unwrap_or("-"),
                r.id,
                r.severity.name(),
                layers(r),
                r.summary
            );
        }
    }
    out
}

/// A rule's documentation as Markdown (for `explain` and `rules --docs`).
fn rule_doc(r: &rules::Rule) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## {} ({})\n", r.id, r.code.as_deref().unwrap_or("no code"));
    let _ = writeln!(out, "{}\n", r.summary);
    let _ = writeln!(out, "pack `{}` · severity `{}` · layers `{}`", r.pack, r.severity.name(), layers(r));
    let doc = r.page().trim().replace("\n## ", "\n### ");
    let doc = doc.strip_prefix("## ").map(|d| format!("### {d}")).unwrap_or(doc);
    let _ = writeln!(out, "\n{doc}");
    out
}

/// Every rule's documentation, pack by pack.
pub fn docs(set: &RuleSet) -> String {
    let mut out = String::from("# Built-in rules\n\nGenerated by `hlolint rules --docs`; do not edit by hand.\n\n");
    for p in &set.packs {
        let ext = if p.extends.is_empty() { String::new() } else { format!(" (extends {})", p.extends.join(", ")) };
        let _ = writeln!(out, "# Pack `{}`{ext}\n\n{}\n", p.name, p.description.trim());
        for id in &p.rules {
            if let Some(r) = set.rule(id) {
                out.push_str(&rule_doc(r));
                out.push('\n');
            }
        }
    }
    out
}

pub fn explain(args: &ExplainArgs) -> i32 {
    let mut specs: Vec<String> = rules::load::BUILTIN.iter().map(|(n, _)| n.to_string()).collect();
    match config_packs(&args.cfg) {
        Ok(p) => specs.extend(p),
        Err(code) => return code,
    }
    specs.extend(args.rules.iter().cloned());
    let set = match load_or_all(&specs) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let key = args.rule.trim().trim_start_matches("hlolint::").replace('_', "-");
    if let Some(r) = set.rule(&key) {
        let mut out = rule_doc(r);
        if !r.valid.is_empty() || !r.invalid.is_empty() {
            let _ = writeln!(out, "\ntests: run `hlolint test --filter {}`", r.id);
        }
        crate::out!("{out}");
        return 0;
    }
    if let Some(a) = crate::analysis::analysis(&key) {
        let ls: Vec<&str> = a.layers.iter().map(|l| l.name()).collect();
        crate::outln!("# analysis {}\n\nlayers: {}\n\n{}", a.name, ls.join(", "), a.doc);
        if !a.captures.is_empty() {
            crate::outln!("\ncaptures (`{{analysis.KEY}}` in messages): detail, {}", a.captures.join(", "));
        }
        if !a.kinds.is_empty() {
            crate::outln!("\nkinds (`when: {{ kind: ... }}` selects among them): {}", a.kinds.join(", "));
        }
        for (o, d) in a.options {
            crate::outln!("option `{o}`: {d}");
        }
        return 0;
    }
    let ids: Vec<&str> = set.rules.iter().map(|r| r.id.as_str()).collect();
    let analyses = crate::analysis::ANALYSES.iter().map(|a| a.name);
    let names = set.rules.iter().flat_map(|r| r.code.as_deref().into_iter().chain([r.id.as_str()])).chain(analyses);
    let mean = crate::suggest::hint(&args.rule, names).map(|h| format!("{h} ")).unwrap_or_default();
    eprintln!(
        "{:?}",
        miette::Report::new(UsageError::NoSuchRuleOrAnalysis {
            rule: args.rule.clone(),
            help: format!("{mean}rules: {}", ids.join(", ")),
        })
    );
    2
}

//! Runs rules over a compilation: matchers over every op of each unit of the rule's layers, named analyses per
//! unit; renders messages; links and deduplicates what several units of one kernel say (a kernel is often
//! present as a Mosaic dump *and* as a body decoded from the HLO: one finding, saying where it was seen).

use super::matcher::{self, Caps};
use super::model::*;
use super::props;
use super::template::render;
use super::RuleSet;
use crate::analysis::{At, Hit, Verdict};
use crate::ir::{Layer, Module, OpId, Span};
use crate::lint::{Compilation, Stage, Unit};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;

/// One finding, ready to report.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub rule: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub severity: Severity,
    /// `inconclusive`: the analysis could not decide (reported at note level, never counted as a pass or a
    /// failure); `explored`: what it explored (shown with `-v`). Absent for ordinary findings.
    #[serde(skip_serializing_if = "is_finding")]
    pub verdict: Verdict,
    pub pack: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    pub path: String,
    pub span: Span,
    pub label: String,
    /// Secondary labels in the same file.
    pub labels: Vec<(Span, String)>,
    /// Everything else worth saying: the same fact in other layers, where else it was seen.
    pub notes: Vec<String>,
    /// The compilation (dump directory) and its target.
    pub compilation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    pub layer: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Which unit said it: a file, or a kernel decoded from a custom call.
    pub source: String,
    /// The user's Python source line of the op (from HLO metadata or a decoded kernel's locations; for a kernel
    /// dump without locations, the same op decoded from the HLO, else the `pallas_call`'s line), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python: Option<PySource>,
    #[serde(skip)]
    key: FindingKey,
    /// The stage of the unit it came from (the best stage speaks, [`Stage`]).
    #[serde(skip)]
    stage: Stage,
}

/// A line of the user's Python source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PySource {
    pub file: String,
    pub line: u32,
    /// 1-based; 0 when unknown.
    pub column: u32,
}

impl Finding {
    /// What the finding is about, independent of dump line numbers: `kernel:NAME|tpu.matmul#2`, `program|message`,
    /// ... (the identity findings are deduplicated by). `report::fingerprint` hashes it.
    pub fn identity(&self) -> (&str, &str) {
        (&self.key.scope, &self.key.what)
    }
}

fn is_finding(v: &Verdict) -> bool {
    *v == Verdict::Finding
}

/// What makes two findings the same: rule, kernel (or file), and the op by opcode and ordinal within the
/// kernel — equal between a kernel's Mosaic dump and its decoded body, which have the same ops in the same order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
struct FindingKey {
    rule: String,
    scope: String,
    what: String,
    /// Findings of a rule in a later stage of the same program/kernel are dropped when a canonical stage has
    /// some: `kernel:NAME` for Mosaic, `program` for HLO/StableHLO, the file for LLO.
    family: String,
}

/// Severity per rule after `--severity`/config overrides.
pub type SeverityOf<'r> = dyn Fn(&Rule) -> Severity + Sync + 'r;

/// Do the live rules read LLO programs beyond the ops `semantic::llo::read_across_layers` keeps: a matcher on the
/// LLO layer (it may name any op), or an analysis that reads whole programs? Else a run keeps only those ops.
pub fn reads_whole_llo(rules: &RuleSet, severity_of: &SeverityOf<'_>) -> bool {
    rules.rules.iter().filter(|r| severity_of(r) != Severity::Off).any(|r| match &r.kind {
        RuleKind::Select(_) => r.layers.contains(&Layer::Llo),
        RuleKind::Analysis(a, ..) => a.llo == crate::analysis::LloReads::Whole,
    })
}

/// The environment variable that makes a run print, per (rule, unit) task, its wall time to stderr as a tab-separated
/// line `HLOLINT_TIMINGS, compilation, code (else id), file, seconds` — a measurement hook for `scripts/bench.py`
/// (docs/performance.md), not a report. Rules that call one analysis, or analyses that share one computation (the
/// DMA engine's balance, races and double buffering), show its time under the first of them in rule order.
pub const TIMINGS: &str = "HLOLINT_TIMINGS";

pub fn run(rules: &RuleSet, c: &Compilation<'_>, severity_of: &SeverityOf<'_>) -> Vec<Finding> {
    let live: Vec<(&Rule, Severity)> =
        rules.rules.iter().map(|r| (r, severity_of(r))).filter(|(_, sev)| *sev != Severity::Off).collect();
    // Every (rule, unit) pair is a task of its own (an analysis of one kernel can take most of a compilation's
    // time) but for analyses that share a computation (`tasks`); the findings are then taken in rule order, then
    // unit order, whatever order the tasks ran in.
    let pairs: Vec<(usize, usize)> = (0..live.len())
        .flat_map(|ri| (0..c.units.len()).map(move |ui| (ri, ui)))
        .filter(|&(ri, ui)| live[ri].0.layers.contains(&c.units[ui].layer()))
        .collect();
    let timed = std::env::var_os(TIMINGS).is_some();
    let mut done: Vec<(usize, Vec<Finding>)> = tasks(&pairs, &live)
        .par_iter()
        .with_max_len(1)
        .map(|task| {
            let mut memo = Memo::new();
            task.iter()
                .map(|&i| {
                    let (ri, ui) = pairs[i];
                    let started = timed.then(std::time::Instant::now);
                    let found = rule_on_unit(live[ri].0, live[ri].1, c, ui, &mut memo);
                    if let Some(t) = started {
                        // (one line per task, written whole: tasks of several threads interleave by line)
                        let (rule, unit) = (live[ri].0, &c.units[ui]);
                        let code = rule.code.as_deref().unwrap_or(&rule.id);
                        eprintln!("{TIMINGS}\t{}\t{code}\t{}\t{:.4}", c.dir, unit.path, t.elapsed().as_secs_f64());
                    }
                    (i, found)
                })
                .collect::<Vec<_>>()
        })
        .flatten()
        .collect();
    done.sort_unstable_by_key(|(i, _)| *i);
    let found = done.into_iter().map(|(_, f)| f);
    let mut found = pairs.iter().map(|p| p.0).zip(found).peekable();
    let mut out = Vec::new();
    for (ri, (rule, _)) in live.iter().enumerate() {
        let first = out.len();
        while let Some((_, f)) = found.next_if(|(r, _)| *r == ri) {
            out.extend(f);
        }
        // When the rule read the optimized, scheduled HLO, that is the program that runs and its silence is a
        // verdict: XLA may have undone what an earlier stage shows (a convert folded into the dot), so the
        // earlier stages do not speak for the program.
        let read_final = c.units.iter().any(|u| rule.layers.contains(&u.layer()) && u.stage == Stage::OptimizedHlo);
        if read_final {
            let mut mine = out.split_off(first);
            mine.retain(|f| f.key.family != "program" || f.stage == Stage::OptimizedHlo);
            out.extend(mine);
        }
    }
    dedupe(out)
}

/// The (rule, unit) pairs grouped into tasks, each a list of indices into `pairs`: a matcher's pair alone; the
/// pairs of the rules on one unit that call one analysis, or analyses that share a computation, together — one
/// thread then computes it once (apart, two threads would each compute it: the DMA engine's run of one kernel
/// can take a minute, the fp8 analyses read every LLO program).
fn tasks(pairs: &[(usize, usize)], live: &[(&Rule, Severity)]) -> Vec<Vec<usize>> {
    let shares = |ri: usize| match &live[ri].0.kind {
        RuleKind::Analysis(a, ..) => Some(a.shares.unwrap_or(a.name)),
        RuleKind::Select(_) => None,
    };
    let mut out: Vec<Vec<usize>> = Vec::new();
    // (unit, shared computation) → its task
    let mut at: rustc_hash::FxHashMap<(usize, &str), usize> = Default::default();
    for (i, &(ri, ui)) in pairs.iter().enumerate() {
        match shares(ri) {
            Some(s) => {
                let task = *at.entry((ui, s)).or_insert_with(|| {
                    out.push(Vec::new());
                    out.len() - 1
                });
                out[task].push(i);
            }
            None => out.push(vec![i]),
        }
    }
    out
}

/// The hits of the analyses a task ran on its unit, by analysis and options: rules that call one analysis with
/// the same options (`fp8-emulated` and `fp8-not-native` differ only in the hits they keep) run it once.
type Memo<'r> = Vec<(&'static crate::analysis::Analysis, &'r crate::analysis::Options, Vec<crate::analysis::Hit>)>;

/// The findings of one rule on one unit, in the order the matcher or analysis gives them.
fn rule_on_unit<'r>(
    rule: &'r Rule,
    sev: Severity,
    c: &Compilation<'_>,
    ui: usize,
    memo: &mut Memo<'r>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    match &rule.kind {
        RuleKind::Select(mt) => {
            for (op, caps) in matcher::select(&c.units[ui].module, mt) {
                out.push(from_match(rule, sev, c, ui, op, &caps));
            }
        }
        RuleKind::Analysis(a, options, when) => {
            let at = match memo.iter().position(|(b, o, _)| std::ptr::eq(*b, *a) && *o == options) {
                Some(i) => i,
                None => {
                    memo.push((a, options, (a.run)(c, ui, options)));
                    memo.len() - 1
                }
            };
            for hit in &memo[at].2 {
                let filtered = matches!(hit.verdict, Verdict::Finding | Verdict::Assumed);
                if filtered && !when.iter().all(|(k, r)| hit.captures.get(k).is_some_and(|v| r.is_match(v))) {
                    continue;
                }
                // (only the hits this rule keeps are copied: the memo holds them for the task's other rules)
                out.push(from_hit(rule, sev, c, hit.clone()));
            }
        }
    }
    out
}

fn target_text(c: &Compilation<'_>) -> String {
    c.target.as_ref().map(|t| t.name().to_string()).unwrap_or_else(|| "an unknown target".into())
}

/// Values every template can use.
fn global(key: &str, rule: &Rule, c: &Compilation<'_>, unit: &Unit<'_>, op: Option<OpId>) -> Option<String> {
    Some(match key {
        "target" => target_text(c),
        "target.source" => {
            c.target.as_ref().map(|t| format!("{:?}", t.source).to_lowercase()).unwrap_or_else(|| "none".into())
        }
        "native_fp8_on" => crate::lint::target::native_fp8_generations(),
        "kernel" => kernel_of(unit, op).unwrap_or_else(|| "-".into()),
        "file" => unit.path.to_string(),
        "unit" => unit.describe(),
        "rule.id" => rule.id.clone(),
        "rule.code" => rule.code.clone().unwrap_or_default(),
        _ => return None,
    })
}

/// The kernel a Mosaic op belongs to (its function), or the custom call a decoded unit came from.
fn kernel_of(unit: &Unit<'_>, op: Option<OpId>) -> Option<String> {
    if unit.layer() != Layer::Mosaic {
        return None;
    }
    let m = &unit.module;
    let f = match op {
        Some(op) => m.func_of(op),
        None => m.entry?,
    };
    Some(m.func(f).name.to_string())
}

/// A property of a captured op for templates.
fn op_prop(m: &Module<'_>, id: OpId, prop: &str) -> Option<String> {
    let op = m.op(id);
    let dt = |d: Option<crate::ir::DType>| d.map(|d| d.name().to_string());
    Some(match prop {
        "name" => {
            if op.name.is_empty() {
                op.opcode.to_string()
            } else {
                format!("%{}", op.name)
            }
        }
        "opcode" => op.opcode.to_string(),
        "dtype" | "to" => dt(props::result_dtype(m, id))?,
        "from" => dt(m.operand_dtype(id, 0))?,
        "type" => match &op.ty {
            crate::ir::Type::Shape(s) => s.to_string(),
            crate::ir::Type::Mlir(t) => t.to_string(),
            crate::ir::Type::Text(t) => t.to_string(),
            crate::ir::Type::None => return None,
        },
        "function" => m.func(m.func_of(id)).name.to_string(),
        "memory_space" => props::memory_space(m, id)?,
        "rank" | "elements" => {
            let (r, e) = props::rank_elements(m, id);
            if prop == "rank" {
                r?.to_string()
            } else {
                e?.to_string()
            }
        }
        "source" => props::metadata_field(m, id, "source")?,
        "custom_call_target" => props::custom_call_target(m, id)?,
        p => {
            if let Some(a) = p.strip_prefix("attr.") {
                props::attr_text(m, id, a)?
            } else if let Some(k) = p.strip_prefix("metadata.") {
                props::metadata_field(m, id, k)?
            } else {
                return None;
            }
        }
    })
}

fn display_name(m: &Module<'_>, id: OpId) -> String {
    let op = m.op(id);
    if op.name.is_empty() {
        format!("`{}`", op.opcode)
    } else {
        format!("`%{}` ({})", op.name, op.opcode)
    }
}

/// `op`'s index among the ops of its opcode in `among`: how a finding names an op whatever the line numbers, the
/// same in a kernel's dump and its decoded body, and in a whole or partial LLO graph.
fn ordinal(m: &Module<'_>, among: impl IntoIterator<Item = OpId>, op: OpId) -> usize {
    let opcode = m.op(op).opcode;
    among.into_iter().filter(|&o| m.op(o).opcode == opcode).position(|o| o == op).unwrap_or(0)
}

fn key_for(rule: &Rule, unit: &Unit<'_>, op: Option<OpId>, message: &str, facts: Option<String>) -> FindingKey {
    let m = &unit.module;
    let analysis = matches!(rule.kind, RuleKind::Analysis(..));
    match (unit.layer(), op) {
        (Layer::Mosaic, Some(op)) if !analysis => {
            let f = m.func_of(op);
            let (opcode, ordinal) = (m.op(op).opcode, ordinal(m, m.func_ops(f), op));
            let scope = format!("kernel:{}", m.func(f).name);
            FindingKey { rule: rule.id.clone(), family: scope.clone(), scope, what: format!("{opcode}#{ordinal}") }
        }
        // an analysis's hit (on an op, an argument, the signature): the same facts (its captures besides the
        // wording of `detail`, which may cite line numbers only a dump has) about the same kernel
        (Layer::Mosaic, _) => {
            let name = match op {
                Some(op) => m.func(m.func_of(op)).name,
                None => m.entry.map(|f| m.func(f).name).unwrap_or(m.name),
            };
            let scope = format!("kernel:{name}");
            let what = facts.filter(|f| !f.is_empty()).unwrap_or_else(|| message.to_string());
            FindingKey { rule: rule.id.clone(), family: scope.clone(), scope, what }
        }
        // HLO op names are unique in a program: the same message on the same op in two HLO files of one
        // compilation (the dump and `llo/*-TLP-hlo.txt`) is one finding
        (Layer::Hlo | Layer::StableHlo, _) => FindingKey {
            rule: rule.id.clone(),
            scope: "program".into(),
            what: message.to_string(),
            family: "program".into(),
        },
        // LLO: the op by opcode and ordinal, the same whether the unit holds its whole program or only the ops the
        // run reads
        _ => {
            let scope = format!("file:{}", unit.path);
            let at = op.map(|op| format!("{}#{}", m.op(op).opcode, ordinal(m, m.op_ids(), op)));
            let what = format!("{}|{message}", at.unwrap_or_default());
            FindingKey { rule: rule.id.clone(), family: scope.clone(), scope, what }
        }
    }
}

/// What identifies an analysis's hit: its facts, not their wording (`detail` may cite dump lines; `help` is
/// advice chosen by the failure's kind, a fact of its own — rewording it must not make a finding new).
fn identity_facts<'c>(captures: impl Iterator<Item = (&'c String, &'c String)>) -> String {
    let facts: Vec<String> =
        captures.filter(|(k, _)| !matches!(k.as_str(), "detail" | "help")).map(|(k, v)| format!("{k}={v}")).collect();
    facts.join("|")
}

#[allow(clippy::too_many_arguments)]
fn finding(
    rule: &Rule,
    sev: Severity,
    c: &Compilation<'_>,
    unit: &Unit<'_>,
    op: Option<OpId>,
    span: Span,
    message: String,
    label: String,
) -> Finding {
    Finding {
        rule: rule.id.clone(),
        code: rule.code.clone(),
        severity: sev,
        verdict: Verdict::Finding,
        pack: rule.pack.clone(),
        key: key_for(rule, unit, op, &message, None),
        message,
        help: None,
        path: unit.path.to_string(),
        span,
        label,
        labels: Vec::new(),
        notes: Vec::new(),
        compilation: c.dir.clone(),
        target: c.target.as_ref().map(|t| t.name().to_string()),
        layer: unit.layer().name(),
        kernel: kernel_of(unit, op),
        source: unit.describe(),
        python: python_source(c, unit, op),
        stage: unit.stage,
    }
}

/// The innermost Python frame of an op's source stack.
fn py_frame(m: &Module<'_>, op: OpId) -> Option<PySource> {
    m.source_stack(op).into_iter().find(|l| l.file.ends_with(".py")).map(|l| PySource {
        file: l.file,
        line: l.line,
        column: l.column,
    })
}

/// For an op XLA made itself (no metadata: a `copy-start` moving a kernel's operand into VMEM), the Python line of
/// the nearest op using its value that the author wrote (the `pallas_call` it feeds), breadth first and at most
/// [`USER_DEPTH`] steps away: the line the author reads the finding at and silences it on.
fn first_user_frame(m: &Module<'_>, op: OpId) -> Option<PySource> {
    let mut seen = std::collections::HashSet::from([op]);
    let mut level = vec![op];
    for _ in 0..USER_DEPTH {
        let mut next = Vec::new();
        for &o in &level {
            for &u in m.op(o).users.iter() {
                if !seen.insert(u) {
                    continue;
                }
                if let Some(p) = py_frame(m, u) {
                    return Some(p);
                }
                next.push(u);
            }
        }
        level = next;
    }
    None
}

/// How far [`first_user_frame`] looks: a copy's start, its done, the call reading it, through a tuple or two.
const USER_DEPTH: usize = 4;

/// Where in the user's Python an op comes from: the frame of its call chain that tells it apart from its
/// function's other ops ([`Compilation::blamed_frame`]: the call site, not a helper's line two call sites share) —
/// from its own location, or for a Mosaic dump (which has none) the same op decoded from the HLO's custom call
/// (same kernel, opcode and ordinal) —, else that call's `pallas_call` line.
pub(crate) fn python_source(c: &Compilation<'_>, unit: &Unit<'_>, op: Option<OpId>) -> Option<PySource> {
    let m = &unit.module;
    let ui = c.units.iter().position(|u| std::ptr::eq(u, unit));
    if let Some(l) = ui.zip(op).and_then(|(ui, o)| c.blamed_frame(ui, o)) {
        return Some(PySource { file: l.file, line: l.line, column: l.column });
    }
    if let Some(p) = op.and_then(|o| py_frame(m, o)) {
        return Some(p);
    }
    if let Some(h) = &unit.host {
        return c.units.get(h.unit).and_then(|u| py_frame(&u.module, h.call));
    }
    if matches!(unit.layer(), Layer::Hlo | Layer::StableHlo) {
        return op.and_then(|o| first_user_frame(m, o));
    }
    if unit.layer() != Layer::Mosaic {
        return None;
    }
    let kernel = kernel_of(unit, op)?;
    let ordinal = op.map(|o| (m.op(o).opcode, ordinal(m, m.func_ops(m.func_of(o)), o)));
    for u in c.units.iter().filter(|u| u.host.is_some() && u.layer() == Layer::Mosaic) {
        let dm = &u.module;
        let Some(f) = (0..dm.funcs.len() as u32).map(crate::ir::FuncId).find(|&f| dm.func(f).name == kernel) else {
            continue;
        };
        if let Some((opcode, n)) = ordinal {
            let same = dm.func_ops(f).into_iter().filter(|&x| dm.op(x).opcode == opcode).nth(n);
            if let Some(p) = same.and_then(|x| py_frame(dm, x)) {
                return Some(p);
            }
        }
        let h = u.host.as_ref()?;
        return c.units.get(h.unit).and_then(|hu| py_frame(&hu.module, h.call));
    }
    None
}

fn from_match(rule: &Rule, sev: Severity, c: &Compilation<'_>, ui: usize, op: OpId, caps: &Caps) -> Finding {
    let unit = &c.units[ui];
    let m = &unit.module;
    let lookup = |k: &str| -> Option<String> {
        if let Some(v) = global(k, rule, c, unit, Some(op)) {
            return Some(v);
        }
        let (cap, prop) = k.split_once('.').unwrap_or((k, "name"));
        let id = *caps.get(cap)?;
        op_prop(m, id, prop)
    };
    let message = render(&rule.message, &lookup);
    let label = rule.label.as_deref().map(|t| render(t, &lookup)).unwrap_or_else(|| "here".into());
    let mut f = finding(rule, sev, c, unit, Some(op), unit.span_of(op), message, label);
    f.help = rule.help.as_deref().map(|t| render(t.trim(), &lookup));
    for (at, text) in &rule.labels {
        let Some(&id) = caps.get(at) else { continue };
        let text = render(text, &lookup);
        if unit.host.is_none() {
            f.labels.push((crate::lint::compilation::headline(m.op(id)), text));
        } else {
            f.notes.push(format!("{text}: {}", display_name(m, id)));
        }
    }
    if unit.host.is_some() {
        f.notes.insert(0, format!("in {}: {}", unit.describe(), display_name(m, op)));
    }
    f
}

fn at_unit(at: &At) -> usize {
    match at {
        At::Op { unit, .. } | At::Span { unit, .. } => *unit,
    }
}

fn from_hit(rule: &Rule, sev: Severity, c: &Compilation<'_>, hit: Hit) -> Finding {
    let ui = at_unit(&hit.at).min(c.units.len().saturating_sub(1));
    let unit = &c.units[ui];
    let op = match hit.at {
        At::Op { op, .. } => Some(op),
        At::Span { .. } => None,
    };
    let lookup = |k: &str| -> Option<String> {
        if let Some(v) = global(k, rule, c, unit, op) {
            return Some(v);
        }
        if let Some(a) = k.strip_prefix("analysis.") {
            return hit.captures.get(a).cloned();
        }
        let (cap, prop) = k.split_once('.').unwrap_or((k, "name"));
        (cap == "op").then_some(())?;
        op_prop(&unit.module, op?, prop)
    };
    let verdict = hit.verdict;
    let name = match &rule.kind {
        crate::rules::model::RuleKind::Analysis(a, ..) => a.name,
        _ => "the analysis",
    };
    let detail = hit.captures.get("detail").cloned().unwrap_or_default();
    let (sev, message, label) = match verdict {
        // what only excluded inputs reach is worth a look, not a failure of the rule: a warning at most
        Verdict::Finding | Verdict::Assumed => (
            if verdict == Verdict::Assumed { sev.min(Severity::Warning) } else { sev },
            render(&rule.message, &lookup),
            rule.label.as_deref().map(|t| render(t, &lookup)).unwrap_or_else(|| hit.label.clone()),
        ),
        Verdict::Inconclusive => (Severity::Info, format!("{name} inconclusive: {detail}"), hit.label.clone()),
        Verdict::Explored => (Severity::Info, format!("{name} explored {detail}"), hit.label.clone()),
    };
    let span = match hit.at {
        At::Op { op, .. } => unit.span_of(op),
        At::Span { span, .. } => span,
    };
    let mut f = finding(rule, sev, c, unit, op, span, message, label);
    f.verdict = verdict;
    f.key = key_for(rule, unit, op, &f.message, Some(identity_facts(hit.captures.iter())));
    if matches!(verdict, Verdict::Finding | Verdict::Assumed) {
        f.help = rule.help.as_deref().map(|t| render(t.trim(), &lookup));
    }
    if let (Some(op), Some(_)) = (op, &unit.host) {
        f.notes.push(format!("in {}: {}", unit.describe(), display_name(&unit.module, op)));
    }
    for l in hit.labels {
        let lu = at_unit(&l.at).min(c.units.len().saturating_sub(1));
        let other = &c.units[lu];
        let same_file = other.path == unit.path && other.host.is_none();
        match (&l.at, same_file) {
            (At::Op { op, .. }, true) => {
                f.labels.push((crate::lint::compilation::headline(other.module.op(*op)), l.text))
            }
            (At::Span { span, .. }, true) => f.labels.push((*span, l.text)),
            (At::Op { op, .. }, false) => {
                f.notes.push(format!("{}: {} in {}", l.text, display_name(&other.module, *op), other.describe()))
            }
            (At::Span { .. }, false) => f.notes.push(format!("{} in {}", l.text, other.describe())),
        }
    }
    f.notes.extend(hit.related);
    f
}

/// A unit's description with its path cut to the file name.
fn short(source: &str) -> String {
    source.split(' ').map(|w| w.rsplit('/').next().unwrap_or(w)).collect::<Vec<_>>().join(" ")
}

/// One finding per key: the first from a unit with text of its own (a dump) is primary, the others become a
/// note saying where else it was seen; later stages ([`Stage`]'s order: optimized HLO, HLO before optimizations,
/// StableHLO; the kernel as written before later Mosaic stages) only speak for a program or kernel when better
/// ones said nothing for that rule.
fn dedupe(all: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by_key(|&i| (all[i].stage, all[i].source.contains(" decoded from ")));
    let mut index: HashMap<FindingKey, usize> = HashMap::new();
    // (rule, family) → (best stage, first finding at it)
    let mut best: HashMap<(String, String), (Stage, usize)> = HashMap::new();
    for i in order {
        let f = &all[i];
        if let Some(&k) = index.get(&f.key) {
            if out[k].python.is_none() {
                out[k].python = f.python.clone();
            }
            let note = format!("also seen in {}", short(&f.source));
            if out[k].source != f.source && !out[k].notes.contains(&note) {
                out[k].notes.push(note);
            }
            continue;
        }
        let scope = (f.rule.clone(), f.key.family.clone());
        match best.get(&scope) {
            Some(&(stage, k)) if f.stage > stage => {
                let note = format!("also seen at another stage: {}", short(&f.source));
                if out[k].source != f.source && !out[k].notes.contains(&note) {
                    out[k].notes.push(note);
                }
                continue;
            }
            Some(_) => {}
            None => {
                best.insert(scope, (f.stage, out.len()));
            }
        }
        index.insert(f.key.clone(), out.len());
        out.push(f.clone());
    }
    // report order: by file and position
    out.sort_by(|a, b| {
        (a.compilation.as_str(), a.path.as_str(), a.span.start, a.rule.as_str()).cmp(&(
            b.compilation.as_str(),
            b.path.as_str(),
            b.span.start,
            b.rule.as_str(),
        ))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::identity_facts;
    use std::collections::BTreeMap;

    #[test]
    fn rules_sharing_a_computation_run_in_one_task_per_unit() {
        use super::{tasks, RuleKind, Severity};
        let rules = crate::rules::load::load_all_builtin().expect("the built-in packs load");
        let live: Vec<_> = rules.rules.iter().map(|r| (r, Severity::Warning)).collect();
        let code = |ri: usize| live[ri].0.code.as_deref().unwrap_or(&live[ri].0.id);
        let pairs: Vec<(usize, usize)> = (0..live.len()).flat_map(|ri| [(ri, 0), (ri, 1)]).collect();
        let grouped = tasks(&pairs, &live);
        // every pair in exactly one task
        let mut all: Vec<usize> = grouped.iter().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..pairs.len()).collect::<Vec<_>>());
        let task_of = |c: &str, unit: usize| {
            let i = pairs.iter().position(|&(ri, ui)| code(ri) == c && ui == unit).expect("the rule is built in");
            grouped.iter().position(|t| t.contains(&i))
        };
        // the DMA engine's three analyses share its run; two rules of one analysis share the analysis
        assert_eq!(task_of("MO010", 0), task_of("MO011", 0));
        assert_eq!(task_of("MO010", 0), task_of("MO021", 0));
        assert_eq!(task_of("XL004", 1), task_of("XL005", 1));
        // not across units, not between unrelated analyses, never for a matcher
        assert_ne!(task_of("MO010", 0), task_of("MO010", 1));
        assert_ne!(task_of("MO010", 0), task_of("XL004", 0));
        for (t, task) in grouped.iter().enumerate() {
            if task.iter().any(|&i| matches!(live[pairs[i].0].0.kind, RuleKind::Select(_))) {
                assert_eq!(task.len(), 1, "a matcher's pair alone in task {t}");
            }
        }
    }

    #[test]
    fn a_hits_wording_is_not_its_identity() {
        let hit = |help: &str, detail: &str| {
            let c: BTreeMap<String, String> = [("kind", "never-waited"), ("help", help), ("detail", detail)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            identity_facts(c.iter())
        };
        assert_eq!(hit("add the missing .wait()", "line 3"), hit("wait for it", "line 9"));
        assert_eq!(hit("x", "y"), "kind=never-waited");
    }
}

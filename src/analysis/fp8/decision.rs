//! A request and its evidence as a hit: emulated, widened, the native format missing, or an unknown target.

use super::evidence::{Evidence, Proof};
use crate::analysis::{At, Hit, Options};
use crate::lint::target::{native_generations, Narrow, Target, TargetSource};
use crate::lint::Compilation;
use crate::semantic::llo;

fn source_text(s: TargetSource) -> &'static str {
    match s {
        TargetSource::Flag => "--target",
        TargetSource::Manifest => "the driver's manifest.json",
        TargetSource::DirName => "the dump folder's name",
        TargetSource::LloEvidence => "the LLO dumps",
    }
}

/// Is every type the MXU gets instead of `n` an integer one of the next-wider family (int4 → s8)? XLA dots do that
/// on generations with an s4 mode.
pub(super) fn widened_to_int8(n: Narrow, wide: &str) -> bool {
    n == Narrow::Int4 && wide.split('/').all(|w| llo::segment_dtype(w).and_then(Narrow::of) == Some(Narrow::Int8))
}

/// What a hit about a narrow request says: its kind, the MXU format seen, the detail and the label.
struct Wording {
    kind: &'static str,
    mxu_format: String,
    detail: String,
    label: String,
}

/// Turns a request of family `n` (`what`: the op in words) and its evidence into a hit, or nothing when the MXU
/// runs `n` natively (or nothing can be said). fp8 says "emulated", the integer families "widened".
pub(super) fn decide(c: &Compilation<'_>, at: At, what: &str, ev: &Evidence, opts: &Options, n: Narrow) -> Option<Hit> {
    let target = c.target.as_ref();
    let said = match ev.proof(n) {
        Proof::Native => return None,
        Proof::Emulated { shown, format, wide } => emulated(what, n, target, &shown, format, &wide),
        Proof::None => unproven(what, n, target, opts)?,
    };
    let mut h = Hit::new(at, said.label, said.detail)
        .capture("target", target.map(|t| t.name()).unwrap_or("unknown"))
        .capture("mxu_format", said.mxu_format)
        .capture("native_on", native_generations(n))
        .capture("kind", said.kind);
    h.related = ev.related();
    if let Some(t) = target {
        h.related.push(format!("target {} (from {})", t.name(), source_text(t.source)));
    }
    Some(h)
}

/// The MXU gets a wider format than requested (`wide`, seen as `shown`): on a target that runs `n` natively the
/// native format is missing (or the compiler widened int4 to int8), elsewhere the request is emulated.
fn emulated(what: &str, n: Narrow, target: Option<&Target>, shown: &str, format: String, wide: &str) -> Wording {
    let (ty, native_on) = (n.name(), native_generations(n));
    let tname = target.map(|t| t.name()).unwrap_or("unknown");
    let verb = if n == Narrow::Fp8 { "emulated" } else { "widened" };
    let tnative = target.and_then(|t| t.generation.native(n));
    let (kind, detail, label) = if tnative == Some(true) && widened_to_int8(n, wide) {
        (
            "widened-to-int8",
            format!(
                "{what}: {ty} requested and {tname} runs {ty} natively, but the MXU gets {wide} here ({shown}): \
                 the compiler widened {ty} to int8 (a Pallas kernel's matmul gets the {ty} mode)"
            ),
            format!("{ty} matmul, but the MXU gets {wide}"),
        )
    } else if tnative == Some(true) {
        (
            "native-format-missing",
            format!(
                "{what}: {ty} requested and {tname} runs {ty} natively, but the MXU gets {wide} here ({shown}): \
                 the native {ty} format is missing"
            ),
            format!("{ty} matmul, but the MXU gets {wide}"),
        )
    } else if target.is_some() {
        (
            "emulated",
            format!("{what}: {ty} requested but {verb} on {tname}: the MXU gets {wide} ({shown}); {ty} runs natively on {native_on}"),
            format!("{ty} matmul {verb} on {tname}"),
        )
    } else {
        (
            "emulated",
            format!(
                "{what}: {ty} requested but {verb}: the MXU gets {wide} ({shown}); {ty} runs natively on {native_on}"
            ),
            format!("{ty} matmul {verb}"),
        )
    };
    Wording { kind, mxu_format: format, detail, label }
}

/// No stage shows the MXU format: a target without an MXU mode for `n` is a finding; an unknown target is one
/// only when the rule requires a target (`require_target`).
fn unproven(what: &str, n: Narrow, target: Option<&Target>, opts: &Options) -> Option<Wording> {
    let (ty, native_on) = (n.name(), native_generations(n));
    let through = if n == Narrow::Fp8 { "emulated through bf16/f32" } else { "widened to bf16/f32" };
    let Some(t) = target else {
        if opts.get("require_target").and_then(|v| v.as_bool()) != Some(true) {
            return None;
        }
        return Some(Wording {
            kind: "unknown-target",
            mxu_format: String::new(),
            detail: format!(
                "{what}: {ty} requested, but the target generation is unknown and no LLO or Mosaic stage shows the \
                 MXU format; {ty} runs natively only on {native_on} (give --target)"
            ),
            label: format!("{ty} matmul on an unknown target"),
        });
    };
    if t.generation.native(n) != Some(false) {
        return None;
    }
    let tname = t.name();
    Some(Wording {
        kind: "emulated",
        mxu_format: String::new(),
        detail: format!(
            "{what}: {ty} requested but {tname} (from {}) has no {ty} MXU, so the matmul cannot run in {ty} there \
             ({through}, or refused by Mosaic); {ty} runs natively on {native_on}",
            source_text(t.source)
        ),
        label: format!("{ty} matmul, no {ty} MXU on {tname}"),
    })
}

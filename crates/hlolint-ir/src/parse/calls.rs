//! The Pallas kernels inside a parsed HLO or StableHLO module: each `tpu_custom_call`'s `backend_config` body
//! decoded from MLIR bytecode, so parsing a file yields its graph and the kernels it carries. A body that cannot be
//! decoded is a problem on its call, not an error of the file.

use crate::ir::{Module, OpId, Span};
use crate::parse::bytecode::DecodedKernel;
use miette::{Diagnostic, NamedSource, SourceSpan};

/// A kernel body decoded from a custom call.
#[derive(Debug)]
pub struct DecodedCall {
    pub call: OpId,
    /// The call's instruction name (`fp8_mm_v3.1`; a StableHLO call's SSA number).
    pub call_name: String,
    /// The call's `backend_config` attribute (where findings about the kernel point).
    pub span: Span,
    pub kernel: DecodedKernel,
}

/// A body that could not be decoded.
#[derive(Debug)]
pub struct UndecodedCall {
    pub call: String,
    pub span: Span,
    pub message: String,
}

/// Is `op` a Pallas TPU custom call: HLO `custom-call` with `custom_call_target="tpu_custom_call"`, or an MLIR
/// `*custom_call` whose `call_target_name` is `@tpu_custom_call` (a symbol, quoted or not, or a string)?
pub fn is_tpu_custom_call(m: &Module<'_>, op: OpId) -> bool {
    let o = m.op(op);
    if o.opcode == "custom-call" {
        return m.custom_call_target(op).as_deref() == Some("tpu_custom_call");
    }
    if !o.opcode.ends_with("custom_call") {
        return false;
    }
    let Some(v) = o.attr("call_target_name") else { return false };
    let word = v.word().map(|w| w.trim_start_matches('@'));
    crate::parse::mlir::attr::symbol(v) == Some("tpu_custom_call")
        || word == Some("tpu_custom_call")
        || v.string().as_deref() == Some("tpu_custom_call")
}

/// The `tpu_custom_call`s of `m`: HLO `custom-call`s (`hlo`), else MLIR `*custom_call` ops.
fn tpu_calls<'m>(m: &'m Module<'_>, hlo: bool) -> impl Iterator<Item = OpId> + 'm {
    m.op_ids().filter(move |&i| (m.op(i).opcode == "custom-call") == hlo && is_tpu_custom_call(m, i))
}

/// Decodes the kernel body of every `tpu_custom_call` of `m` (HLO when `hlo`, else StableHLO: the backend config is
/// a raw JSON object or an escaped string), in op order.
pub fn decode_calls(m: &Module<'_>, hlo: bool) -> (Vec<DecodedCall>, Vec<UndecodedCall>) {
    let mut decoded = Vec::new();
    let mut failed = Vec::new();
    for id in tpu_calls(m, hlo) {
        let op = m.op(id);
        let Some(attr) = op.attr_entry("backend_config") else { continue };
        let config = attr.value_span().text(m.text);
        match crate::parse::bytecode::kernel_from_backend_config(config) {
            Ok(Some(kernel)) => {
                decoded.push(DecodedCall { call: id, call_name: op.name.to_string(), span: attr.span, kernel })
            }
            Ok(None) => {}
            Err(e) => failed.push(UndecodedCall { call: op.name.to_string(), span: attr.span, message: e.to_string() }),
        }
    }
    (decoded, failed)
}

/// A kernel body inside a custom call that could not be decoded: reported on the custom call's span, while the
/// rest of the file is summarized (and linted) as usual.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("cannot decode the Pallas kernel of `{call}`: {message}")]
#[diagnostic(
    code(hlolint::kernel::decode),
    help("the rest of the file is still checked; kernel-level facts of this call are missing")
)]
pub struct KernelDecodeError {
    pub call: String,
    pub message: String,
    #[source_code]
    pub src: NamedSource<String>,
    #[label("this backend_config holds the kernel body")]
    pub span: SourceSpan,
}

impl KernelDecodeError {
    /// The diagnostic for `failed`, a call in file `path` of text `text`.
    pub fn new(failed: &UndecodedCall, path: &str, text: &str) -> KernelDecodeError {
        KernelDecodeError {
            call: failed.call.clone(),
            message: failed.message.clone(),
            src: NamedSource::new(path, text.to_string()),
            span: failed.span.into(),
        }
    }
}

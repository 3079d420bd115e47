//! How the layers of one compilation name the same computation — the one place these relations are written; the
//! analyses' linker over a compilation's units (`analysis::crosslink`) and the summary's over file summaries
//! (`summary::link`) both ask here: the HLO custom call `%fp8_mm_v3.1` runs the Mosaic kernel `@fp8_mm_v3` (its
//! decoded body's kernel function, StableHLO's `kernel_name`, else the call's name without XLA's `.N`), and is the
//! computation of the LLO dump whose entry bundle names `fp8_mm_v3.1` (else the file name's computation); an XLA
//! fusion is the LLO computation of the same name; `TLP` and `<…>` computations are the runtime's own.

use crate::ir::{Module, OpId};
use crate::parse::mlir::attr;

/// `fp8_mm_v3.1` → `fp8_mm_v3`: XLA appends `.N` to the kernel's name to make the instruction name.
pub fn base_name(call: &str) -> &str {
    match call.rsplit_once('.') {
        Some((b, n)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => b,
        _ => call,
    }
}

/// Computations that are not ops of the model: libtpu's top-level program and runtime programs.
pub fn is_runtime_computation(name: &str) -> bool {
    name == "TLP" || name.starts_with('<')
}

/// The kernel function of a Mosaic module: the function with grid or kernel attributes (`@fp8_mm_v3`).
pub fn kernel_name<'a>(m: &Module<'a>) -> Option<&'a str> {
    super::kernel::kernel_funcs(m).next().map(|f| m.func(f).name)
}

/// The kernel custom call `op` of `m` runs: the kernel function of its decoded body (`decoded`), else StableHLO's
/// `kernel_name` attribute, else the call's name without XLA's `.N` suffix.
pub fn call_kernel_name(m: &Module<'_>, op: OpId, decoded: Option<&Module<'_>>) -> String {
    if let Some(n) = decoded.and_then(kernel_name) {
        return n.to_string();
    }
    if let Some(n) = m.op(op).attr("kernel_name").and_then(attr::string) {
        return n.into_owned();
    }
    base_name(m.op(op).name).to_string()
}

/// The computation an LLO program was compiled for: the entry bundle's HLO instruction (`fp8_mm_v3.1`, `fusion`),
/// else the computation its file name carries (`file_computation`: `parse::llo::llo_file_name`'s).
pub fn llo_computation(m: &Module<'_>, file_computation: Option<&str>) -> Option<String> {
    if let Some(n) = super::llo::entry_info(m).name {
        return Some(n.to_string());
    }
    file_computation.map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_relate_across_layers() {
        assert_eq!(base_name("fp8_mm_v3.1"), "fp8_mm_v3");
        assert_eq!(base_name("fusion"), "fusion");
        assert_eq!(base_name("v1.2.x"), "v1.2.x");
        assert_eq!(base_name("name."), "name.");
        assert!(is_runtime_computation("TLP") && is_runtime_computation("<late-finalization>"));
        assert!(!is_runtime_computation("fusion.3"));
    }
}

//! Any byte string: the MLIR bytecode reader returns a module or an error, never panics, and a decoded module
//! builds its graph and renders. Seed corpus: `tests/data/bytecode/*.mlirbc`
//! (`cargo +nightly fuzz run bytecode tests/data/bytecode`).
#![no_main]

use hlolint::parse::bytecode;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(d) = bytecode::decode(data) {
        let m = d.module();
        let _ = hlolint::ir::print::render_module(&m);
    }
    // The backend-config path too (text input: JSON or escaped attribute).
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = bytecode::kernels_in_backend_config(text);
    }
});

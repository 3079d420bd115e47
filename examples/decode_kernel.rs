//! Decodes the tpu_custom_call kernels of an HLO or StableHLO file (or a raw `.mlirbc`) and prints them.
//! `cargo run --example decode_kernel -- FILE`
use hlolint::ir::print::render_module;
use hlolint::parse::bytecode;

fn main() {
    let path = std::env::args().nth(1).expect("usage: decode_kernel FILE");
    let bytes = std::fs::read(&path).expect("read");
    if bytes.starts_with(b"ML\xefR") {
        match bytecode::decode(&bytes) {
            Ok(d) => {
                println!("// bytecode v{} by {}; notes: {:?}", d.version, d.producer, d.notes);
                print!("{}", render_module(&d.module()));
            }
            Err(e) => eprintln!("error: {e}"),
        }
        return;
    }
    let text = String::from_utf8_lossy(&bytes);
    for (i, _) in text.match_indices("custom_call_config") {
        // The backend config around this match: from the preceding `{` of the config to the line end.
        let start = text[..i].rfind("backend_config").map(|s| s + "backend_config".len()).unwrap_or(i);
        let line_end = text[i..].find('\n').map(|e| i + e).unwrap_or(text.len());
        let cfg = text[start..line_end].trim_start_matches([' ', '=']);
        match bytecode::kernel_from_backend_config(cfg) {
            Ok(Some(k)) => {
                println!(
                    "// kernel {:?}: {} bytes, bytecode v{} by {}; notes: {:?}",
                    k.name(),
                    k.body_len,
                    k.module.version,
                    k.module.producer,
                    k.module.notes
                );
                print!("{}", render_module(&k.module.module()));
            }
            Ok(None) => println!("// no body"),
            Err(e) => eprintln!("error: {e}"),
        }
    }
}

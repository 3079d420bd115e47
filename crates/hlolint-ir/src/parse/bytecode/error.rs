//! What can go wrong when reading a kernel body. The caller (the HLO/StableHLO parser) attaches the
//! custom-call's span; these messages say what is wrong inside the body.

use miette::Diagnostic;

#[derive(Debug, Clone, PartialEq, thiserror::Error, Diagnostic)]
pub enum BytecodeError {
    #[error("not MLIR bytecode: expected the magic bytes `ML\\xefR`, found {found}")]
    #[diagnostic(code(hlolint::bytecode::magic), help("the kernel body should be base64 of MLIR bytecode"))]
    BadMagic { found: String },

    #[error("MLIR bytecode version {version} (produced by `{producer}`) is not supported: this reader reads versions 0 to {max}")]
    #[diagnostic(
        code(hlolint::bytecode::version),
        help("a newer MLIR wrote this kernel; hlolint needs an update to read it")
    )]
    UnsupportedVersion { version: u64, max: u64, producer: String },

    #[error("malformed MLIR bytecode in the {section} at byte {offset}: {message}")]
    #[diagnostic(code(hlolint::bytecode::malformed))]
    Malformed { offset: usize, section: &'static str, message: String },

    #[error("the kernel body is not valid base64: {0}")]
    #[diagnostic(code(hlolint::bytecode::base64))]
    Base64(String),

    #[error("tpu_custom_call backend_config: {0}")]
    #[diagnostic(code(hlolint::bytecode::config))]
    Config(String),
}

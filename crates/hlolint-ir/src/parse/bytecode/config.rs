//! Finding the kernel body in a `tpu_custom_call`'s `backend_config`.
//!
//! The same JSON reaches us in two spellings:
//! - HLO (after optimizations) prints the backend config as a raw JSON dict:
//!   `backend_config={"flag_configs":[],...,"custom_call_config":{"body":"TUzvUg...","needs_layout_passes":true,...}}`
//!   (older XLA printed it as a quoted string with C escapes: `backend_config="{\"custom_call_config\": ...}"`).
//! - StableHLO prints it as an MLIR string attribute, quotes escaped as `\22`:
//!   `backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUg...\22, ...}}"`.
//!
//! [`kernels_in_backend_config`] takes the attribute's value in any of these forms (with or without the
//! surrounding quotes), undoes the escapes, reads the JSON and decodes `custom_call_config.body` (standard
//! base64 → MLIR bytecode). When the JSON does not parse (e.g. a truncated line), it falls back to finding
//! `"body": "..."` textually, so one damaged field does not hide the kernel.
//!
//! The kernel's name is not in the backend config (jax puts `kernel_name` on the StableHLO custom call as a
//! separate attribute, and HLO only has it in `metadata.op_name`): [`DecodedKernel::name`] is the entry
//! function's `sym_name` from the body itself, or the config's `name`/`kernel_name` field when some producer
//! writes one.

use super::error::BytecodeError;
use super::{decode, DecodedModule};
use base64::Engine;

/// A kernel decoded from a backend config: the decoded body plus the config's other fields.
#[derive(Clone, Debug)]
pub struct DecodedKernel {
    pub module: DecodedModule,
    /// `custom_call_config` without its `body` (`needs_layout_passes`, `cost_estimate`, ...), when the JSON parsed.
    pub config: Option<serde_json::Value>,
    /// Size of the bytecode body in bytes.
    pub body_len: usize,
}

impl DecodedKernel {
    /// The kernel's name: a `name`/`kernel_name` field of the config if present, else the entry function.
    pub fn name(&self) -> Option<&str> {
        let from_config =
            self.config.as_ref().and_then(|c| c.get("kernel_name").or_else(|| c.get("name")).and_then(|v| v.as_str()));
        from_config.or_else(|| self.module.kernel_name())
    }
}

/// Every kernel in a backend config: a `tpu_custom_call` holds one (`custom_call_config.body`); a config
/// without a body (any other custom call) holds none. Errors are about the body (base64, bytecode).
pub fn kernels_in_backend_config(config: &str) -> Result<Vec<DecodedKernel>, BytecodeError> {
    Ok(kernel_from_backend_config(config)?.into_iter().collect())
}

/// The kernel of a `tpu_custom_call` backend config, `None` when the config has no `custom_call_config.body`.
pub fn kernel_from_backend_config(config: &str) -> Result<Option<DecodedKernel>, BytecodeError> {
    let json = unescape_config(config);
    let parsed: Option<serde_json::Value> = serde_json::from_str(&json).ok();
    let (body, rest) = match &parsed {
        Some(v) => match v.get("custom_call_config") {
            Some(ccc) => match ccc.get("body").and_then(|b| b.as_str()) {
                Some(b) => {
                    let mut rest = ccc.clone();
                    if let Some(o) = rest.as_object_mut() {
                        o.remove("body");
                    }
                    (b.to_string(), Some(rest))
                }
                None if ccc.get("body").is_some() => {
                    return Err(BytecodeError::Config("`custom_call_config.body` is not a string".into()))
                }
                None => return Ok(None),
            },
            None => return Ok(None),
        },
        None => match find_body(&json) {
            Some(b) => (b.to_string(), None),
            None => return Ok(None),
        },
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(body.trim())
        .map_err(|e| BytecodeError::Base64(e.to_string()))?;
    let module = decode(&bytes)?;
    Ok(Some(DecodedKernel { module, config: rest, body_len: bytes.len() }))
}

/// `"body": "<base64>"` found textually (after `custom_call_config` when present).
fn find_body(json: &str) -> Option<&str> {
    let from = json.find("custom_call_config").unwrap_or(0);
    let rest = &json[from..];
    let at = rest.find("\"body\"")?;
    let rest = rest[at + 6..].trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let end = rest.find('"').unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Undoes the string-attribute escapes: strips one level of surrounding quotes, then decodes MLIR's `\XX` hex
/// escapes and C escapes (`\"`, `\\`, `\n`). Raw JSON (no surrounding quote) is returned as is: inside raw
/// JSON, backslashes belong to JSON itself.
fn unescape_config(s: &str) -> String {
    let t = s.trim();
    let quoted = t.len() >= 2 && t.starts_with('"') && t.ends_with('"');
    let inner = if quoted { &t[1..t.len() - 1] } else { t };
    if !quoted && !inner.contains("\\22") && !inner.starts_with("{\\\"") {
        return inner.to_string();
    }
    let b = inner.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if i + 2 < b.len() {
                if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
            }
            let c = b[i + 1];
            out.push(match c {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                other => other,
            });
            i += 2;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes_both_spellings() {
        assert_eq!(unescape_config(r#"{"a": 1}"#), r#"{"a": 1}"#);
        assert_eq!(unescape_config(r#""{\22a\22: 1}""#), r#"{"a": 1}"#);
        assert_eq!(unescape_config(r#"{\22a\22: 1}"#), r#"{"a": 1}"#);
        assert_eq!(unescape_config(r#""{\"a\": \"x\\y\"}""#), r#"{"a": "x\y"}"#);
    }

    #[test]
    fn no_body_is_no_kernel() {
        assert!(kernel_from_backend_config(r#"{"flag_configs":[]}"#).unwrap().is_none());
        assert!(kernel_from_backend_config("").unwrap().is_none());
    }

    #[test]
    fn corrupt_base64_is_a_clear_error() {
        let e = kernel_from_backend_config(r#"{"custom_call_config":{"body":"TUzv!!"}}"#).unwrap_err();
        assert!(matches!(e, BytecodeError::Base64(_)), "{e}");
        assert!(e.to_string().contains("base64"), "{e}");
    }

    #[test]
    fn wrong_magic_is_a_clear_error() {
        let e = kernel_from_backend_config(r#"{"custom_call_config":{"body":"aGVsbG8="}}"#).unwrap_err();
        assert!(matches!(e, BytecodeError::BadMagic { .. }), "{e}");
    }

    #[test]
    fn truncated_json_still_finds_the_body() {
        assert_eq!(find_body(r#"{"custom_call_config": {"body": "TUzvUg", "needs"#), Some("TUzvUg"));
    }
}

//! A version that did not compile, as a diagnostic on the user's source line (the helper's error record names
//! the innermost frame in the user's module: the `pallas_call`, or the kernel line Mosaic rejected).

use miette::{Diagnostic, NamedSource, SourceSpan};

#[derive(Clone, Debug, thiserror::Error, Diagnostic)]
#[error("{unit}: {kind} failed: {headline}")]
#[diagnostic(code(hlolint::compile::failed))]
pub struct CompileFailure {
    pub unit: String,
    pub kind: String,
    pub headline: String,
    #[source_code]
    pub src: Option<NamedSource<String>>,
    #[label("{exception}")]
    pub span: Option<SourceSpan>,
    pub exception: String,
    #[help]
    pub details: Option<String>,
}

impl CompileFailure {
    pub fn from_record(version: Option<&str>, target: Option<&str>, error: Option<&serde_json::Value>) -> Self {
        let s = |k: &str| error.and_then(|e| e.get(k)).and_then(|v| v.as_str()).unwrap_or("").to_string();
        let unit = match (version, target) {
            (Some(v), Some(t)) => format!("{v}@{t}"),
            (Some(v), None) => v.to_string(),
            _ => "the kernel module".to_string(),
        };
        let message = s("message");
        let headline = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message").trim().to_string();
        let rest: Vec<&str> = message.lines().skip_while(|l| l.trim() != headline).skip(1).take(12).collect();
        let details = (!rest.is_empty()).then(|| rest.join("\n"));
        let kind = match s("stage").as_str() {
            "" => s("kind"),
            stage => stage.to_string(),
        };
        let exception = match s("type").as_str() {
            "" => "raised here".to_string(),
            t => format!("{t} raised here"),
        };
        // The user's source line, when the file is readable here.
        let file = s("file");
        let line = error.and_then(|e| e.get("line")).and_then(|l| l.as_u64()).unwrap_or(0) as usize;
        let (src, span) = match std::fs::read_to_string(&file) {
            Ok(text) if line > 0 => match crate::ir::LineIndex::new(&text).line_range(&text, line) {
                Some(r) => {
                    // the line's code, its indentation and line ending left out (CRLF files too)
                    let indent = text[r.clone()].len() - text[r.clone()].trim_start().len();
                    let span = (r.start + indent, r.len() - indent);
                    (Some(NamedSource::new(&file, text)), Some(span.into()))
                }
                None => (Some(NamedSource::new(&file, text)), None),
            },
            _ => (None, None),
        };
        CompileFailure {
            unit,
            kind: if kind.is_empty() { "compile".into() } else { kind },
            headline,
            src,
            span,
            exception,
            details,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_at_the_user_line() {
        let dir = std::env::temp_dir().join(format!("hlolint-fail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("kernels.py");
        std::fs::write(&file, "import jax\n\ndef k():\n    return pl.pallas_call(\n").unwrap();
        let record = serde_json::json!({
            "kind": "lowering", "type": "ValueError", "stage": "lower",
            "message": "The Pallas TPU lowering currently requires that the last two dimensions be divisible by 8 and 128\nmore detail",
            "file": file.to_string_lossy(), "line": 4
        });
        let f = CompileFailure::from_record(Some("bug_bad_block"), Some("tpu7x"), Some(&record));
        assert_eq!(f.unit, "bug_bad_block@tpu7x");
        assert_eq!(f.kind, "lower");
        assert!(f.headline.starts_with("The Pallas TPU lowering"));
        assert_eq!(f.details.as_deref(), Some("more detail"));
        let span = f.span.unwrap();
        assert_eq!(span.offset(), "import jax\n\ndef k():\n    ".len());
        assert_eq!(f.exception, "ValueError raised here");
        // Without a readable file: still a diagnostic, without a snippet.
        let f = CompileFailure::from_record(
            None,
            None,
            Some(&serde_json::json!({"kind": "import", "message": "No module named jax"})),
        );
        assert!(f.src.is_none() && f.unit == "the kernel module" && f.kind == "import");
        // A module saved with CRLF line endings: the span is the line's code, as with `\n` alone.
        std::fs::write(&file, "import jax\r\n\r\ndef k():\r\n    return pl.pallas_call(\r\n").unwrap();
        let f = CompileFailure::from_record(Some("v"), None, Some(&record));
        let span = f.span.unwrap();
        assert_eq!(span.offset(), "import jax\r\n\r\ndef k():\r\n    ".len());
        assert_eq!(span.len(), "return pl.pallas_call(".len());
        std::fs::remove_dir_all(&dir).ok();
    }
}

//! A miette source over a whole dump that shows long lines as a window around the span: a `tpu_custom_call` line
//! holds its kernel as ~50 kB of base64, and a diagnostic must not print all of it. The window is a contiguous
//! slice of the file, so offsets stay those of the file and line numbers stay true.

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};
use std::sync::Arc;

/// Lines longer than this are shown as a window.
const LONG_LINE: usize = 400;
/// Bytes shown on each side of a span on a long line.
const WINDOW: usize = 100;

#[derive(Clone, Debug)]
pub struct Excerpt {
    pub name: String,
    pub text: Arc<String>,
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let text = self.text.as_str();
        let start = span.offset().min(text.len());
        let end = (span.offset() + span.len()).min(text.len());
        let line_start = text[..start].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let line_end = text[end..].find('\n').map(|i| end + i).unwrap_or(text.len());
        if line_end - line_start <= LONG_LINE {
            let c = text.read_span(span, before, after)?;
            return Ok(Box::new(MietteSpanContents::new_named(
                self.name.clone(),
                c.data(),
                *c.span(),
                c.line(),
                c.column(),
                c.line_count(),
            )));
        }
        let w0 = floor_char(text, start.saturating_sub(WINDOW).max(line_start));
        let w1 = ceil_char(text, (end + WINDOW).min(line_end));
        let line = text[..w0].bytes().filter(|&b| b == b'\n').count();
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            &text.as_bytes()[w0..w1],
            SourceSpan::from((w0, w1 - w0)),
            line,
            w0 - line_start,
            1,
        )))
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = floor_char(text, offset);
    let line_start = text[..offset].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = text[..offset].bytes().filter(|&b| b == b'\n').count() + 1;
    (line, text[line_start..offset].chars().count() + 1)
}

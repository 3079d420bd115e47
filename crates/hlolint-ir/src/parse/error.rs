//! The parse error every format's parser returns: where parsing stopped, and what was expected there.
//!
//! Inside the nom parsers, `PErr` tracks the furthest failure (the place a human wants pointed at); at the top it
//! becomes a `SyntaxError`, a miette diagnostic with the file's text and a label on the span.

use crate::ir::span::offset;
use miette::{Diagnostic, NamedSource, SourceSpan};
use nom::error::{ContextError, ErrorKind, FromExternalError, ParseError};
use std::borrow::Cow;

/// nom error type: the remaining input where a parser failed and a description of what it expected.
#[derive(Clone, Debug, PartialEq)]
pub struct PErr<'a> {
    pub at: &'a str,
    pub expected: Cow<'static, str>,
}

pub type PResult<'a, T> = nom::IResult<&'a str, T, PErr<'a>>;

impl<'a> PErr<'a> {
    pub fn new(at: &'a str, expected: impl Into<Cow<'static, str>>) -> Self {
        PErr { at, expected: expected.into() }
    }

    /// A recoverable failure (`Err::Error`).
    pub fn fail<T>(at: &'a str, expected: impl Into<Cow<'static, str>>) -> PResult<'a, T> {
        Err(nom::Err::Error(PErr::new(at, expected)))
    }

    /// The unrecoverable error itself, for functions that return a plain `Result`.
    pub fn failure(at: &'a str, expected: impl Into<Cow<'static, str>>) -> nom::Err<Self> {
        nom::Err::Failure(PErr::new(at, expected))
    }

    /// An unrecoverable failure (`Err::Failure`): the input is committed to this branch.
    pub fn cut<T>(at: &'a str, expected: impl Into<Cow<'static, str>>) -> PResult<'a, T> {
        Err(nom::Err::Failure(PErr::new(at, expected)))
    }
}

impl<'a> ParseError<&'a str> for PErr<'a> {
    fn from_error_kind(input: &'a str, kind: ErrorKind) -> Self {
        PErr::new(input, kind.description().to_string())
    }

    fn append(_: &'a str, _: ErrorKind, other: Self) -> Self {
        other
    }

    fn from_char(input: &'a str, c: char) -> Self {
        PErr::new(input, format!("`{c}`"))
    }

    /// Of two alternatives, report the one that got further: that is where the input really went wrong.
    fn or(self, other: Self) -> Self {
        if other.at.len() < self.at.len() {
            other
        } else {
            self
        }
    }
}

impl<'a> ContextError<&'a str> for PErr<'a> {
    fn add_context(_input: &'a str, ctx: &'static str, mut other: Self) -> Self {
        if other.expected.starts_with('`') || other.expected.contains(' ') {
            return other;
        }
        other.expected = Cow::Borrowed(ctx);
        other
    }
}

impl<'a, E> FromExternalError<&'a str, E> for PErr<'a> {
    fn from_external_error(input: &'a str, kind: ErrorKind, _e: E) -> Self {
        PErr::from_error_kind(input, kind)
    }
}

/// A file that could not be parsed: a miette diagnostic pointing at where parsing stopped.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{format} syntax error: expected {expected}, found {found}")]
#[diagnostic(code(hlolint::parse))]
pub struct SyntaxError {
    pub format: &'static str,
    pub expected: String,
    pub found: String,
    #[source_code]
    pub src: NamedSource<String>,
    #[label("parsing stopped here: expected {expected}")]
    pub span: SourceSpan,
}

impl SyntaxError {
    /// Builds the diagnostic for `err` raised while parsing `text` (the whole file) named `path`.
    pub fn new(format: &'static str, path: &str, text: &str, err: &PErr<'_>) -> Self {
        let at = offset(text, err.at).min(text.len());
        Self::at(format, path, text, at, err.expected.to_string())
    }

    pub fn at(format: &'static str, path: &str, text: &str, at: usize, expected: String) -> Self {
        let at = at.min(text.len());
        let rest = &text[at..];
        let found = describe_found(rest);
        let body_end = text.trim_end().len();
        // At the end of the input there is nothing to underline: point at the last character instead, so the
        // report shows the line where the text stopped.
        let (at, len) = if at >= body_end && body_end > 0 {
            let last = text[..body_end].chars().next_back().map(char::len_utf8).unwrap_or(1);
            (body_end - last, last)
        } else {
            let len = rest.chars().next().map(|c| if c.is_whitespace() { 0 } else { token_len(rest) }).unwrap_or(0);
            (at, len)
        };
        SyntaxError { format, expected, found, src: NamedSource::new(path, text.to_string()), span: (at, len).into() }
    }
}

fn token_len(s: &str) -> usize {
    let n = s.find(|c: char| c.is_whitespace() || ",(){}[]=".contains(c)).unwrap_or(s.len());
    if n == 0 {
        s.chars().next().map(char::len_utf8).unwrap_or(0)
    } else {
        n.min(60)
    }
}

fn describe_found(rest: &str) -> String {
    match rest.chars().next() {
        None => "end of file".into(),
        Some(c) if c == '\n' || c == '\r' => "end of line".into(),
        Some(c) if c.is_whitespace() => "whitespace".into(),
        Some(_) => {
            let n = token_len(rest);
            let mut end = n.min(40);
            while !rest.is_char_boundary(end) {
                end -= 1;
            }
            format!("`{}`", &rest[..end])
        }
    }
}

//! Byte spans into a source file. Every node of the graph carries one so that any diagnostic can point at the
//! exact text it is about.

use std::ops::Range;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start: start as u32, end: end as u32 }
    }

    /// The span of `sub`, which must be a slice of `base` (zero-copy parsing makes every token one).
    pub fn of(base: &str, sub: &str) -> Self {
        let start = offset(base, sub);
        Span::new(start, start + sub.len())
    }

    /// The span from the start of `from` to the start of `rest` (both slices of `base`).
    pub fn between(base: &str, from: &str, rest: &str) -> Self {
        Span::new(offset(base, from), offset(base, rest))
    }

    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    pub fn text(self, src: &str) -> &str {
        src.get(self.range()).unwrap_or("")
    }
}

impl From<Span> for miette::SourceSpan {
    fn from(s: Span) -> Self {
        (s.start as usize, s.len()).into()
    }
}

/// Byte offset of `sub` inside `base`. Both must come from the same allocation; a slice from elsewhere maps to 0
/// rather than panicking.
pub fn offset(base: &str, sub: &str) -> usize {
    let b = base.as_ptr() as usize;
    let s = sub.as_ptr() as usize;
    if s >= b && s <= b + base.len() {
        s - b
    } else {
        0
    }
}

//! An attribute `name=value`. Its value is a tree (`ir::Value`) that a parser either builds at once or leaves as
//! text, already checked against the grammar, to be built on first read: most HLO attribute values (`metadata`,
//! `frontend_attributes`, shardings) are never read by any rule, and building their trees was a third of the parse.

use super::span::Span;
use super::value::Value;
use serde::{Serialize, Serializer};
use std::sync::OnceLock;

/// Builds a deferred value's tree from its text (`key` is the attribute's: XLA's grammar continues a `literal`
/// differently; `start` is the text's offset in the source, for the tree's spans). A parser's own grammar, passed
/// as a function so that `ir` names no parser.
pub type BuildValue = for<'a> fn(key: &'a str, text: &'a str, start: u32) -> Value<'a>;

/// `name=value` on a module, function, op or parameter.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Attr<'a> {
    pub key: &'a str,
    value: AttrValue<'a>,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone)]
enum AttrValue<'a> {
    Tree(Value<'a>),
    /// Boxed: the attribute stays 64 bytes (LLO dumps hold two million of them, all trees).
    Text(Box<Deferred<'a>>),
}

#[derive(Clone)]
struct Deferred<'a> {
    key: &'a str,
    text: &'a str,
    start: u32,
    build: BuildValue,
    /// Built once, by whichever thread reads it first (rules run in parallel over one module). Stored without its
    /// lifetime: a `OnceLock<Value<'a>>` would make every graph invariant in `'a` (a cell can be written through a
    /// shared reference), and the graph's borrows rely on shortening it (`&'p [Parsed<'p>]`).
    tree: OnceLock<Value<'static>>,
}

impl<'a> Attr<'a> {
    pub fn new(key: &'a str, value: Value<'a>, span: Span) -> Self {
        Attr { key, value: AttrValue::Tree(value), span }
    }

    /// An attribute whose value is `text` (at byte `start` of the source), checked by the parser's grammar and
    /// built by `build` when first read.
    pub fn deferred(key: &'a str, text: &'a str, start: u32, build: BuildValue, span: Span) -> Self {
        let deferred = Deferred { key, text, start, build, tree: OnceLock::new() };
        Attr { key, value: AttrValue::Text(Box::new(deferred)), span }
    }

    /// The value's tree (built now if it was deferred).
    pub fn value(&self) -> &Value<'a> {
        self.value.get()
    }

    /// Where the value is written, without building its tree.
    pub fn value_span(&self) -> Span {
        match &self.value {
            AttrValue::Tree(v) => v.span,
            AttrValue::Text(d) => Span { start: d.start, end: d.start + d.text.len() as u32 },
        }
    }
}

impl<'a> AttrValue<'a> {
    fn get(&self) -> &Value<'a> {
        match self {
            AttrValue::Tree(v) => v,
            AttrValue::Text(d) => d.tree.get_or_init(|| {
                let tree: Value<'a> = (d.build)(d.key, d.text, d.start);
                // SAFETY: `build` is `for<'x> fn(&'x str, &'x str, u32) -> Value<'x>`, so the tree borrows nothing
                // but `d.key` and `d.text` (or 'static data), which are valid for as long as this attribute is; the
                // cell is written only here, by `build` over those two; and it is read back only as `&Value<'a>` (the
                // return below, a covariant shortening), never as `'static`. Dropping a tree does not read its strings.
                unsafe { std::mem::transmute::<Value<'a>, Value<'static>>(tree) }
            }),
        }
    }
}

impl std::fmt::Debug for AttrValue<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

impl PartialEq for AttrValue<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Serialize for AttrValue<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ValueKind;

    fn words<'a>(_key: &'a str, text: &'a str, start: u32) -> Value<'a> {
        let span = Span { start, end: start + text.len() as u32 };
        Value { kind: ValueKind::Word(text), span }
    }

    #[test]
    fn a_deferred_value_reads_as_the_tree_it_builds() {
        let src = "x, k=abc";
        let a = Attr::deferred("k", &src[5..], 5, words, Span::new(3, 8));
        assert_eq!(a.value_span(), Span::new(5, 8));
        assert_eq!(a.value().word(), Some("abc"));
        assert_eq!(a.value().span, Span::new(5, 8));
        assert_eq!(a, Attr::new("k", Value { kind: ValueKind::Word("abc"), span: Span::new(5, 8) }, Span::new(3, 8)));
    }

    #[test]
    fn attributes_stay_small() {
        assert_eq!(std::mem::size_of::<Attr<'_>>(), 64);
    }
}

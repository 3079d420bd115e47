//! Where a pack's keys and values are, from the YAML parser's own spans (saphyr-parser's events), found by their
//! path (`rules[0].select.name`). serde reads the pack and reports positions only for the errors it raises itself
//! (an unknown key, a wrong type); an error found later — a bad regex, an op the layer lacks — names the path of
//! what it is about, and this index turns the path into the span of that key or value.
//!
//! The index is built only when an error needs it: a pack that loads is parsed once, by serde.

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// One step of a path into the YAML: a mapping's key or a sequence's item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Item(usize),
}

/// A path from the document's root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct YamlPath(Vec<Seg>);

impl YamlPath {
    pub fn key(&self, k: &str) -> YamlPath {
        let mut p = self.clone();
        p.0.push(Seg::Key(k.to_string()));
        p
    }

    pub fn item(&self, i: usize) -> YamlPath {
        let mut p = self.clone();
        p.0.push(Seg::Item(i));
        p
    }
}

/// Which part of the node a path ends at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The value (for a quoted scalar: its text without the quotes).
    Value,
    /// The key the last step names.
    Key,
}

/// A node of the document with the byte range it covers.
#[derive(Debug)]
enum Node {
    Scalar(Range),
    Seq(Range, Vec<Node>),
    Map(Range, Vec<(String, Range, Node)>),
}

type Range = (usize, usize);

impl Node {
    fn range(&self) -> Range {
        match self {
            Node::Scalar(r) | Node::Seq(r, _) | Node::Map(r, _) => *r,
        }
    }
}

/// The positions of one YAML document.
pub struct Positions {
    root: Option<Node>,
}

impl Positions {
    /// Indexes `text`; a document the parser rejects gives an empty index (every lookup `None`).
    pub fn of(text: &str) -> Positions {
        let bytes = CharToByte::new(text);
        // the events up to the first error: the parser reports that error again rather than ending
        let mut events = Parser::new_from_str(text).map_while(Result::ok).map(|(e, s)| (e, bytes.range(s)));
        let root = loop {
            match events.next() {
                Some((Event::StreamStart | Event::DocumentStart(_), _)) => continue,
                Some((e, r)) => break build(e, r, &mut events, text),
                None => break None,
            }
        };
        Positions { root }
    }

    /// The byte span of what `path` names, or of the deepest part of it that exists (an error about a key that is
    /// absent points at the mapping that lacks it).
    pub fn span(&self, path: &YamlPath, part: Part) -> Option<(usize, usize)> {
        let mut node = self.root.as_ref()?;
        let mut found = node.range();
        for (k, seg) in path.0.iter().enumerate() {
            let last = k + 1 == path.0.len();
            match (seg, node) {
                (Seg::Key(key), Node::Map(_, entries)) => {
                    let Some((_, key_range, value)) = entries.iter().find(|(name, ..)| name == key) else {
                        break;
                    };
                    if last && part == Part::Key {
                        return Some(len(*key_range));
                    }
                    node = value;
                }
                (Seg::Item(i), Node::Seq(_, items)) => match items.get(*i) {
                    Some(item) => node = item,
                    None => break,
                },
                _ => break,
            }
            found = node.range();
        }
        Some(len(found))
    }
}

fn len((start, end): Range) -> (usize, usize) {
    (start, end.saturating_sub(start).max(1))
}

/// Builds the node that starts with event `first`.
fn build<'i>(
    first: Event<'i>,
    range: Range,
    events: &mut impl Iterator<Item = (Event<'i>, Range)>,
    text: &str,
) -> Option<Node> {
    match first {
        Event::Scalar(_, style, ..) => Some(Node::Scalar(unquoted(range, style, text))),
        Event::Alias(_) => Some(Node::Scalar(range)),
        Event::SequenceStart(..) => {
            let mut items = Vec::new();
            let mut end = range.1;
            loop {
                let (e, r) = events.next()?;
                if e == Event::SequenceEnd {
                    end = end.max(r.1);
                    break;
                }
                let item = build(e, r, events, text)?;
                end = end.max(item.range().1);
                items.push(item);
            }
            Some(Node::Seq((range.0, end), items))
        }
        Event::MappingStart(..) => {
            let mut entries = Vec::new();
            let mut end = range.1;
            loop {
                let (e, r) = events.next()?;
                if e == Event::MappingEnd {
                    end = end.max(r.1);
                    break;
                }
                // a key that is not a scalar (`? [a, b]: x`) is no key a pack has: it is kept under no name
                let name = match &e {
                    Event::Scalar(s, ..) => s.to_string(),
                    _ => String::new(),
                };
                let key = build(e, r, events, text)?;
                let (ve, vr) = events.next()?;
                let value = build(ve, vr, events, text)?;
                end = end.max(value.range().1);
                entries.push((name, key.range(), value));
            }
            Some(Node::Map((range.0, end), entries))
        }
        _ => None,
    }
}

/// A scalar's range as the value it reads: without the quotes of a quoted scalar, and without the blanks the
/// parser's span may take in after it (in a flow mapping it ends where the next token starts).
fn unquoted((start, end): Range, style: ScalarStyle, text: &str) -> Range {
    let raw = text.get(start..end).unwrap_or("");
    let end = start + raw.trim_end_matches([' ', '\t', '\r', '\n']).len();
    let quote = match style {
        ScalarStyle::SingleQuoted => '\'',
        ScalarStyle::DoubleQuoted => '"',
        _ => return (start, end),
    };
    match text.get(start..end) {
        Some(q) if q.len() >= 2 && q.starts_with(quote) && q.ends_with(quote) => (start + 1, end - 1),
        _ => (start, end),
    }
}

/// The parser counts characters; miette's spans are bytes.
struct CharToByte {
    starts: Vec<usize>,
}

impl CharToByte {
    fn new(text: &str) -> Self {
        let mut starts: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
        starts.push(text.len());
        CharToByte { starts }
    }

    fn at(&self, chars: usize) -> usize {
        self.starts.get(chars).copied().unwrap_or_else(|| self.starts.last().copied().unwrap_or(0))
    }

    fn range(&self, s: Span) -> Range {
        (self.at(s.start.index()), self.at(s.end.index()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at<'t>(text: &'t str, path: &YamlPath, part: Part) -> &'t str {
        let (s, n) = Positions::of(text).span(path, part).unwrap();
        &text[s..s + n]
    }

    #[test]
    fn keys_values_and_items_in_block_and_flow_style() {
        let text = "pack: p\nrules:\n  - id: é-rule\n    select: { op: [dot, convert], name: \"(x\" }\n";
        let rule = YamlPath::default().key("rules").item(0);
        assert_eq!(at(text, &rule.key("id"), Part::Value), "é-rule");
        assert_eq!(at(text, &rule.key("select").key("op").item(1), Part::Value), "convert");
        assert_eq!(at(text, &rule.key("select").key("name"), Part::Value), "(x", "without the quotes");
        assert_eq!(at(text, &rule.key("select").key("name"), Part::Key), "name");
        // an absent key: the mapping that lacks it
        assert_eq!(at(text, &rule.key("select").key("user"), Part::Value), "{ op: [dot, convert], name: \"(x\" }");
    }

    #[test]
    fn a_document_the_parser_rejects_has_no_positions() {
        assert_eq!(Positions::of("a: [unclosed\n").span(&YamlPath::default().key("a"), Part::Value), None);
    }
}

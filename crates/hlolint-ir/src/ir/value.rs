//! Attribute values as a lossless token tree.
//!
//! XLA keeps adding attributes and attribute syntaxes (shardings, replica groups, windows, `origin=`, sdy meshes
//! inside frontend attributes). Rather than a closed list of typed attribute parsers that breaks on the next XLA
//! release, every value is parsed into this small tree of words, strings, names, punctuation and bracketed groups,
//! with a span on every node. Typed views (`as_int_list`, `get`, ...) interpret it where a rule needs meaning, and
//! the original text is always one `span.text(src)` away.

use super::span::Span;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Value<'a> {
    #[serde(flatten)]
    pub kind: ValueKind<'a>,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", content = "v", rename_all = "snake_case")]
pub enum ValueKind<'a> {
    /// An identifier, keyword, number, padding (`0_1x2_3`), `3x3`, dim labels part: raw text.
    Word(&'a str),
    /// A quoted string, still escaped as written (without the quotes). `unescape` decodes it.
    Str(&'a str),
    /// `%name` (without the `%`).
    Name(&'a str),
    /// Punctuation that is not a separator: `->`, `<=`, `:`, `*`, `#`, `...`, `<`, `>`, `@`, `?`, `+`, `~`, `=`.
    Punct(&'a str),
    /// `{...}`, `[...]`, `(...)`, and MLIR's `<...>`, with the items inside (separating commas dropped).
    Group { open: char, items: Vec<Value<'a>> },
    /// `key=value` (key glued to `=`, as XLA prints sub-attributes: `size=3x3`, `op_name="..."`).
    KeyVal { key: &'a str, value: Box<Value<'a>> },
    /// Several values glued together without separators: `b01f_01io->b01f`, `[2,2]<=[4]`, `[2,1]0`.
    Seq(Vec<Value<'a>>),
    /// A balanced `{...}` kept as text, for values that are JSON for another program (`backend_config`): building
    /// a tree for every instruction's JSON would cost most of the parse; `ir::hlo_view::json_of` reads it.
    Raw(&'a str),
    /// An MLIR typed attribute `value : type` (`0 : i64`, `dense<0.0> : vector<8x128xf32>`); the type as written.
    /// `word()` and the views built on it (`as_int`, `as_bool`) look through it.
    Typed { value: Box<Value<'a>>, ty: &'a str },
}

impl<'a> Value<'a> {
    pub fn word(&self) -> Option<&'a str> {
        match &self.kind {
            ValueKind::Word(w) => Some(w),
            ValueKind::Typed { value, .. } => value.word(),
            _ => None,
        }
    }

    /// The string content, unescaped when it holds escapes.
    pub fn string(&self) -> Option<std::borrow::Cow<'a, str>> {
        match self.kind {
            ValueKind::Str(s) => Some(unescape(s)),
            _ => None,
        }
    }

    /// A name reference (`%foo` or a bare word used as one, as in short-form HLO `to_apply=add`).
    pub fn name_ref(&self) -> Option<&'a str> {
        match self.kind {
            ValueKind::Name(n) | ValueKind::Word(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        self.word().and_then(parse_int)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.word()? {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    pub fn items(&self) -> &[Value<'a>] {
        match &self.kind {
            ValueKind::Group { items, .. } => items,
            _ => &[],
        }
    }

    /// `{1,2,3}` → `[1,2,3]`.
    pub fn as_int_list(&self) -> Option<Vec<i64>> {
        match &self.kind {
            ValueKind::Group { items, .. } => items.iter().map(Value::as_int).collect(),
            _ => None,
        }
    }

    /// `{a, b}` or a single name → names.
    pub fn as_name_list(&self) -> Vec<&'a str> {
        match &self.kind {
            ValueKind::Group { items, .. } => items.iter().filter_map(Value::name_ref).collect(),
            _ => self.name_ref().into_iter().collect(),
        }
    }

    /// Looks a key up inside a `{k=v ...}` group (metadata, window, frontend attributes).
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.items().iter().find_map(|it| match &it.kind {
            ValueKind::KeyVal { key: k, value } if *k == key => Some(&**value),
            _ => None,
        })
    }

    /// Iterates over the `key=value` items of a group.
    pub fn entries(&self) -> impl Iterator<Item = (&'a str, &Value<'a>)> {
        self.items().iter().filter_map(|it| match &it.kind {
            ValueKind::KeyVal { key, value } => Some((*key, &**value)),
            _ => None,
        })
    }
}

/// Parses an integer the way XLA's lexer does: `-?\d+` covering the u64 range (bit-cast), or hex `0x..`.
pub fn parse_int(w: &str) -> Option<i64> {
    if let Ok(v) = w.parse::<i64>() {
        return Some(v);
    }
    if let Ok(v) = w.parse::<u64>() {
        return Some(v as i64);
    }
    let hex = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X"))?;
    u64::from_str_radix(hex, 16).ok().map(|v| v as i64)
}

/// Decodes C escapes (`\n`, `\"`, `\\`, octal `\303`, `\xHH`) as XLA's printer writes them (absl::CEscape), then
/// UTF-8 (lossy: a string is never a reason to fail).
pub fn unescape(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('\\') {
        return std::borrow::Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        let c = b[i];
        i += 1;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'0'..=b'7' => {
                let mut v = (c - b'0') as u32;
                let mut n = 1;
                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + (b[i] - b'0') as u32;
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
            }
            b'x' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 && i < b.len() && b[i].is_ascii_hexdigit() {
                    v = v * 16 + (b[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    std::borrow::Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes_c_escapes() {
        assert_eq!(unescape(r#"a\"b\\c\n"#), "a\"b\\c\n");
        assert_eq!(unescape(r"caf\303\251"), "café");
        assert_eq!(unescape(r"\x41"), "A");
        assert_eq!(unescape("plain"), "plain");
    }

    #[test]
    fn ints_cover_u64() {
        assert_eq!(parse_int("-3"), Some(-3));
        assert_eq!(parse_int("18446744073709551615"), Some(-1));
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int("1.5"), None);
    }
}

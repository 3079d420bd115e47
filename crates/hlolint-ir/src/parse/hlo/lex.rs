//! HLO lexical rules (XLA's `hlo_lexer.cc`): whitespace and comments, identifiers with `-` and `.`, `%names`,
//! numbers. Every function takes the remaining input and returns the rest, nom style; slicing happens only at
//! ASCII positions, so no input can make it split a UTF-8 character.

use crate::parse::error::{PErr, PResult};

/// Skips whitespace, `/* ... */` and `// ...` comments. An unterminated block comment is an error.
#[inline]
pub fn ws(i: &str) -> PResult<'_, ()> {
    // Most calls are between two tokens with nothing to skip: answer those without a loop.
    match i.as_bytes().first() {
        Some(b' ' | b'\t' | b'\n' | b'\r' | b'/') => ws_slow(i),
        _ => Ok((i, ())),
    }
}

fn ws_slow(mut i: &str) -> PResult<'_, ()> {
    loop {
        // bytes, not chars: this runs between every two tokens
        let n = i.bytes().position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r')).unwrap_or(i.len());
        let t = &i[n..];
        if let Some(rest) = t.strip_prefix("/*") {
            match rest.find("*/") {
                Some(end) => i = &rest[end + 2..],
                None => return PErr::cut(t, "`*/` closing this comment"),
            }
        } else if let Some(rest) = t.strip_prefix("//") {
            i = rest.find(['\n', '\r']).map_or("", |n| &rest[n..]);
        } else {
            return Ok((t, ()));
        }
    }
}

/// Whitespace-or-comment skipped; never fails on valid input, so a failure (unterminated comment) is cut.
#[inline]
pub fn sp(i: &str) -> Result<&str, nom::Err<PErr<'_>>> {
    ws(i).map(|(r, _)| r)
}

pub fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// `[A-Za-z0-9_.-]` by table: names are most of an HLO file.
static IDENT_CHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-';
        c += 1;
    }
    t
};

fn is_ident_char(c: u8) -> bool {
    IDENT_CHAR[c as usize]
}

/// Length of the identifier at the start of `i` (`[A-Za-z_][A-Za-z0-9_.-]*`), stopping before a `->` arrow.
pub fn ident_len(i: &str) -> usize {
    let b = i.as_bytes();
    if b.is_empty() || !is_ident_start(b[0]) {
        return 0;
    }
    let mut n = 1;
    while n < b.len() && is_ident_char(b[n]) {
        if b[n] == b'-' && b.get(n + 1) == Some(&b'>') {
            break;
        }
        n += 1;
    }
    n
}

pub fn ident<'a>(i: &'a str, what: &'static str) -> PResult<'a, &'a str> {
    match ident_len(i) {
        0 => PErr::fail(i, what),
        n => Ok((&i[n..], &i[..n])),
    }
}

/// A name: `%foo.1` or a bare identifier `foo.1` (short form). Returns it without the `%`.
pub fn name<'a>(i: &'a str, what: &'static str) -> PResult<'a, &'a str> {
    match i.strip_prefix('%') {
        Some(rest) => match ident_len(rest) {
            0 => PErr::cut(rest, what),
            n => Ok((&rest[n..], &rest[..n])),
        },
        None => ident(i, what),
    }
}

/// Length of a number-like word: ints, decimals (`1.5e-05`, `.5`, `1.`), `-inf`, `-nan`, paddings (`0_1x-1_2_1`),
/// `3x3`, hex payloads (`0x7fc`), dim labels starting with a digit.
pub fn number_len(i: &str) -> usize {
    let b = i.as_bytes();
    let mut n = 0;
    if b.first() == Some(&b'-') {
        n = 1;
    }
    let start = n;
    while n < b.len() {
        let c = b[n];
        let ok = c.is_ascii_alphanumeric()
            || c == b'_'
            || c == b'.'
            || ((c == b'-' || c == b'+') && n > start && matches!(b[n - 1], b'e' | b'E' | b'x' | b'_'));
        if !ok {
            break;
        }
        n += 1;
    }
    if n == start {
        0
    } else {
        n
    }
}

/// A decimal integer (the u64 range is accepted and bit-cast, as XLA does).
pub fn int<'a>(i: &'a str, what: &'static str) -> PResult<'a, i64> {
    let b = i.as_bytes();
    let mut n = usize::from(b.first() == Some(&b'-'));
    let digits_start = n;
    while n < b.len() && b[n].is_ascii_digit() {
        n += 1;
    }
    if n == digits_start {
        return PErr::fail(i, what);
    }
    match crate::ir::value::parse_int(&i[..n]) {
        Some(v) => Ok((&i[n..], v)),
        None => PErr::fail(i, "an integer that fits in 64 bits"),
    }
}

/// `"..."` or `'...'` with backslash escapes; returns the raw (still escaped) content.
pub fn string(i: &str) -> PResult<'_, &str> {
    let b = i.as_bytes();
    let Some(&q) = b.first().filter(|c| **c == b'"' || **c == b'\'') else {
        return PErr::fail(i, "a string");
    };
    let mut n = 1;
    // jump from one quote or backslash to the next: metadata strings are long
    while let Some(k) = b.get(n..).and_then(|r| memchr::memchr2(q, b'\\', r)) {
        n += k;
        if b[n] == q {
            return Ok((&i[n + 1..], &i[1..n]));
        }
        n += 2;
    }
    // the string runs to the end of the input: say so there, naming where it opened
    PErr::cut(
        &i[i.len()..],
        format!("a closing quote for the string opened as `{}`", crate::parse::hlo::value::opening(i)),
    )
}

/// Expects the literal `t` after optional whitespace; fails (recoverably) otherwise.
pub fn tag<'a>(i: &'a str, t: &'static str) -> PResult<'a, &'a str> {
    let i = sp(i)?;
    match i.strip_prefix(t) {
        Some(rest) => Ok((rest, &i[..t.len()])),
        None => PErr::fail(i, tick(t)),
    }
}

/// Like `tag` but a miss is unrecoverable: the construct has begun and only `t` can follow.
pub fn expect<'a>(i: &'a str, t: &'static str) -> PResult<'a, &'a str> {
    tag(i, t).map_err(|e| match e {
        nom::Err::Error(e) => nom::Err::Failure(e),
        e => e,
    })
}

fn tick(t: &'static str) -> &'static str {
    match t {
        "(" => "`(`",
        ")" => "`)`",
        "{" => "`{`",
        "}" => "`}`",
        "[" => "`[`",
        "]" => "`]`",
        "," => "`,`",
        "=" => "`=`",
        ":" => "`:`",
        "->" => "`->`",
        _ => "a keyword",
    }
}

/// Turns a recoverable error into an unrecoverable one (nom's `cut`), for use with `?`.
pub fn cut<T>(r: PResult<'_, T>) -> PResult<'_, T> {
    r.map_err(|e| match e {
        nom::Err::Error(e) => nom::Err::Failure(e),
        e => e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_keep_dashes_and_dots_but_not_arrows() {
        assert_eq!(ident_len("get-tuple-element.5("), 19);
        assert_eq!(ident_len("b01f_01io->b01f"), 9);
        assert_eq!(ident_len("9abc"), 0);
    }

    #[test]
    fn numbers() {
        assert_eq!(number_len("1.5e-05,"), 7);
        assert_eq!(number_len("0_1x-1_2_1 "), 10);
        assert_eq!(number_len("-inf}"), 4);
        assert_eq!(number_len("-"), 0);
        assert_eq!(int("18446744073709551615", "int").unwrap().1, -1);
    }

    #[test]
    fn comments_and_strings() {
        assert_eq!(sp("  /* x */ // y\n z").unwrap(), "z");
        assert!(sp("/* open").is_err());
        assert_eq!(string(r#""a\"b" rest"#).unwrap(), (" rest", r#"a\"b"#));
        assert!(string("\"open").is_err());
    }
}

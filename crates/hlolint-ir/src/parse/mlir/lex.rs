//! Low-level lexing shared by the MLIR parsers: whitespace and comments, identifiers, numbers, string literals.
//! Every function works on `&str` and only splits at ASCII bytes, so slices stay on char boundaries.

use crate::parse::error::{PErr, PResult};

/// Deepest nesting of groups/regions accepted; deeper input is an error instead of a stack overflow.
pub const MAX_DEPTH: u32 = 128;

pub fn too_deep<T>(i: &str, depth: u32) -> Option<PResult<'_, T>> {
    if depth > MAX_DEPTH {
        Some(PErr::cut(i, "less deeply nested input"))
    } else {
        None
    }
}

#[inline]
pub fn split(i: &str, n: usize) -> (&str, &str) {
    // `n` always lands after an ASCII byte or at the end; fall back to no split rather than panic.
    if i.is_char_boundary(n) {
        (&i[n..], &i[..n])
    } else {
        (i, "")
    }
}

/// Skips spaces and tabs (not newlines).
#[inline]
pub fn hws(i: &str) -> &str {
    let n = i.bytes().take_while(|&b| b == b' ' || b == b'\t').count();
    split(i, n).0
}

/// Skips all whitespace, newlines and `//` comments.
pub fn ws(mut i: &str) -> &str {
    loop {
        let n = i.bytes().take_while(|b| b.is_ascii_whitespace()).count();
        i = split(i, n).0;
        if i.starts_with("//") {
            // a comment ends at the line's end, whichever convention (old Mac files end lines with `\r` alone)
            let n = i.find(['\n', '\r']).unwrap_or(i.len());
            i = split(i, n).0;
        } else {
            return i;
        }
    }
}

/// True when only spaces, tabs and maybe a comment are left before the end of the line (or of the input).
pub fn at_eol(i: &str) -> bool {
    let j = hws(i);
    j.is_empty() || j.starts_with('\n') || j.starts_with('\r') || j.starts_with("//")
}

#[inline]
pub fn peek(i: &str) -> Option<u8> {
    i.as_bytes().first().copied()
}

#[inline]
pub fn peek2(i: &str) -> Option<u8> {
    i.as_bytes().get(1).copied()
}

#[inline]
pub fn is_id_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

#[inline]
fn is_id_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'.'
}

/// MLIR bare identifier: `[A-Za-z_][A-Za-z0-9_$.]*` (op names, attribute names, keywords, scalar types).
pub fn bare_id(i: &str) -> PResult<'_, &str> {
    match peek(i) {
        Some(b) if is_id_start(b) => {
            let n = i.bytes().take_while(|&b| is_id_char(b)).count();
            Ok(split(i, n))
        }
        _ => PErr::fail(i, "identifier"),
    }
}

/// The part after `%`, `^`, `#`, `!` or `@`: `[A-Za-z0-9_$.-]+` (SSA names may start with a digit: `%0`).
pub fn suffix_id(i: &str) -> PResult<'_, &str> {
    let n = i.bytes().take_while(|&b| is_id_char(b) || b == b'-').count();
    if n == 0 {
        return PErr::fail(i, "name");
    }
    Ok(split(i, n))
}

/// A string literal: returns the contents without the quotes, escapes left as written.
pub fn string_lit(i: &str) -> PResult<'_, &str> {
    if peek(i) != Some(b'"') {
        return PErr::fail(i, "`\"`");
    }
    let b = i.as_bytes();
    let mut k = 1;
    while k < b.len() {
        match b[k] {
            b'\\' => k += 2,
            b'"' => {
                let content = i.get(1..k).unwrap_or("");
                return Ok((split(i, k + 1).0, content));
            }
            b'\n' => break,
            _ => k += 1,
        }
    }
    PErr::cut(i, "closing `\"` of the string")
}

/// A number as MLIR writes it: `-3`, `1.5e+03`, `0x7FC00000`, `0.000000e+00`.
pub fn number(i: &str) -> PResult<'_, &str> {
    let b = i.as_bytes();
    let mut k = 0;
    if b.first() == Some(&b'-') {
        k = 1;
    }
    if !b.get(k).is_some_and(u8::is_ascii_digit) {
        return PErr::fail(i, "number");
    }
    while k < b.len() {
        let c = b[k];
        let exponent_sign = (c == b'+' || c == b'-')
            && matches!(b.get(k.wrapping_sub(1)), Some(b'e') | Some(b'E'))
            && !i.starts_with("0x");
        if c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || exponent_sign {
            k += 1;
        } else {
            break;
        }
    }
    Ok(split(i, k))
}

/// Skips a balanced bracket expression starting at `i` (which must start with one of `(<[{`), honouring strings
/// and `->`. Returns the rest and the whole text including the brackets.
pub fn balanced(i: &str) -> PResult<'_, &str> {
    let b = i.as_bytes();
    // closing brackets expected, innermost last (no allocation: the depth is bounded)
    let mut stack = [0u8; MAX_DEPTH as usize];
    let mut depth = 0usize;
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        match c {
            b'(' | b'[' | b'{' | b'<' => {
                if depth >= stack.len() {
                    return PErr::cut(split(i, k).0, "less deeply nested input");
                }
                stack[depth] = match c {
                    b'(' => b')',
                    b'[' => b']',
                    b'{' => b'}',
                    _ => b'>',
                };
                depth += 1;
            }
            b'-' if b.get(k + 1) == Some(&b'>') => {
                k += 2;
                continue;
            }
            b')' | b']' | b'}' | b'>' => {
                if depth == 0 || stack[depth - 1] != c {
                    return PErr::cut(split(i, k).0, "balanced brackets");
                }
                depth -= 1;
                if depth == 0 {
                    return Ok(split(i, k + 1));
                }
            }
            b'"' => {
                let (rest, _) = string_lit(split(i, k).0)?;
                k = i.len() - rest.len();
                continue;
            }
            _ => {}
        }
        if depth == 0 {
            return PErr::fail(i, "`(`, `[`, `{` or `<`");
        }
        k += 1;
    }
    PErr::cut(split(i, k).0, "closing bracket")
}

/// Decodes an MLIR string literal's escapes: `\\`, `\"`, `\n`, `\t` and two-digit hex `\22` (lossy UTF-8).
pub fn unescape_mlir(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('\\') {
        return std::borrow::Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        let hex = |x: u8| (x as char).to_digit(16);
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'\\' | b'"' => out.push(c),
            _ => {
                if let (Some(h), Some(l)) = (hex(c), b.get(i + 2).and_then(|&x| hex(x))) {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                out.push(c);
            }
        }
        i += 2;
    }
    std::borrow::Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes() {
        assert_eq!(bare_id("func.func @f"), Ok((" @f", "func.func")));
        assert_eq!(suffix_id("0#1"), Ok(("#1", "0")));
        assert_eq!(string_lit(r#""a\"b" x"#), Ok((" x", r#"a\"b"#)));
        assert_eq!(number("1.5e+03 :"), Ok((" :", "1.5e+03")));
        assert_eq!(number("-2, "), Ok((", ", "-2")));
        assert_eq!(number("0x7FC00000>"), Ok((">", "0x7FC00000")));
        assert_eq!(balanced("<(d0) -> (d0)> x"), Ok((" x", "<(d0) -> (d0)>")));
        assert_eq!(balanced("<\">\"> x"), Ok((" x", "<\">\">")));
        assert!(balanced("<(>").is_err());
        assert_eq!(ws("  // c\n  x"), "x");
        assert_eq!(unescape_mlir(r#"{\22a\22: 1}\0A"#), "{\"a\": 1}\n");
    }
}

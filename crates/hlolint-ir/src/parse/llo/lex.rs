//! Low-level scanners shared by the LLO parsers: whitespace, nested `/* */` comments, words, numbers.
//!
//! They have nom's signature (`&str -> PResult<&str, T>`) so they compose with nom combinators, but scan bytes by
//! hand: final_bundles files are tens of megabytes and these run for every token.

use crate::parse::error::{PErr, PResult};

/// Skips spaces, tabs, CR and LF.
#[inline]
pub fn ws(i: &str) -> &str {
    let n = i.bytes().take_while(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')).count();
    &i[n..]
}

/// Skips spaces and tabs only (stays on the line).
#[inline]
pub fn sp(i: &str) -> &str {
    let n = i.bytes().take_while(|b| matches!(b, b' ' | b'\t')).count();
    &i[n..]
}

/// A `/* ... */` comment, nesting allowed (libtpu prints comments inside comments: a bounds check quotes the DMA it
/// guards together with that DMA's own `/* base_bounds ... */` note). Returns the text between the outer delimiters.
pub fn comment(i: &str) -> PResult<'_, &str> {
    if !i.starts_with("/*") {
        return PErr::fail(i, "`/*`");
    }
    let b = i.as_bytes();
    let mut depth = 1usize;
    let mut k = 2;
    while k < b.len() {
        match b[k] {
            b'/' if b.get(k + 1) == Some(&b'*') => {
                depth += 1;
                k += 2;
            }
            b'*' if b.get(k + 1) == Some(&b'/') => {
                depth -= 1;
                k += 2;
                if depth == 0 {
                    return Ok((&i[k..], &i[2..k - 2]));
                }
            }
            _ => k += 1,
        }
    }
    PErr::cut(i, "`*/` closing the comment")
}

/// Bytes that end a word in operand position.
#[inline]
fn is_word_end(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\r' | b'\n' | b',' | b';' | b':' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'=' | b'"'
    )
}

/// A word: anything up to whitespace, punctuation (`,;:()[]{}="`) or a comment start. At least one byte.
pub fn word(i: &str) -> PResult<'_, &str> {
    let b = i.as_bytes();
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        if is_word_end(c) || (c == b'/' && b.get(k + 1) == Some(&b'*')) {
            break;
        }
        k += 1;
    }
    // Never split a UTF-8 sequence: word ends are ASCII, so k is a char boundary unless the input ended mid-char,
    // which cannot happen for a &str.
    if k == 0 {
        return PErr::fail(i, "a word");
    }
    Ok((&i[k..], &i[..k]))
}

/// `[A-Za-z0-9_]+` plus `.`: register and value names after `%`.
pub fn ident(i: &str) -> PResult<'_, &str> {
    let n = i.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.').count();
    if n == 0 {
        return PErr::fail(i, "a name");
    }
    Ok((&i[n..], &i[..n]))
}

/// The rest of the current line (without the line break) and the input after the line break.
pub fn line(i: &str) -> (&str, &str) {
    match i.find('\n') {
        Some(n) => (i[..n].strip_suffix('\r').unwrap_or(&i[..n]), &i[n + 1..]),
        None => (i, ""),
    }
}

/// One record of a line-oriented table whose cells may embed HLO text: up to the first line break outside every
/// string and bracket. XLA prints some attribute values over several lines (a `frontend_attributes` value that is
/// pretty-printed JSON, a string holding a kernel's text), so a line break inside `{..}`, `[..]`, `(..)`, a
/// `"..."` string (with `\` escapes) or a `/* */` comment continues the record. Returns the record (without its
/// line break) and the input after it; a string, comment or bracket still open at the end of the input is an
/// error pointing at where it was opened. A closer with nothing open is kept as text (XLA never prints one
/// outside a string, and a table cell must not end the record early because of it).
pub fn record(i: &str) -> Result<(&str, &str), nom::Err<PErr<'_>>> {
    let b = i.as_bytes();
    // Offsets of the open brackets, outermost first.
    let mut open: Vec<usize> = Vec::new();
    let mut k = 0;
    while k < b.len() {
        match b[k] {
            b'\n' if open.is_empty() => {
                let l = &i[..k];
                return Ok((l.strip_suffix('\r').unwrap_or(l), &i[k + 1..]));
            }
            b'"' => {
                let start = k;
                k += 1;
                loop {
                    match b.get(k) {
                        None => {
                            return Err(PErr::failure(
                                &i[start..],
                                "`\"` closing this string before the end of the file",
                            ))
                        }
                        Some(b'\\') => k += 2,
                        Some(b'"') => break,
                        _ => k += 1,
                    }
                }
            }
            b'/' if b.get(k + 1) == Some(&b'*') => match comment(&i[k..]) {
                Ok((rest, _)) => {
                    k = i.len() - rest.len();
                    continue;
                }
                Err(_) => return Err(PErr::failure(&i[k..], "`*/` closing this comment before the end of the file")),
            },
            b'{' | b'[' | b'(' => open.push(k),
            b'}' | b']' | b')' => {
                open.pop();
            }
            _ => {}
        }
        k += 1;
    }
    // The outermost: where the unfinished part of the record began.
    if let Some(&at) = open.first() {
        let what = match b[at] {
            b'{' => "`}` closing this `{` before the end of the file",
            b'[' => "`]` closing this `[` before the end of the file",
            _ => "`)` closing this `(` before the end of the file",
        };
        return Err(PErr::failure(&i[at..], what));
    }
    Ok((i, ""))
}

/// Static decimal strings for small numbers, so synthesized attributes (slot, depth) can borrow like parsed ones.
pub fn small_num(n: usize) -> &'static str {
    const NUMS: [&str; 64] = [
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19",
        "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31", "32", "33", "34", "35", "36", "37",
        "38", "39", "40", "41", "42", "43", "44", "45", "46", "47", "48", "49", "50", "51", "52", "53", "54", "55",
        "56", "57", "58", "59", "60", "61", "62", "63",
    ];
    NUMS.get(n).copied().unwrap_or("64+")
}

/// `0`, `0x1f`, `31`: a bundle address or any integer LLO prints.
pub fn parse_uint(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_comments() {
        let (rest, c) = comment("/* a /* b */ c */ tail").unwrap();
        assert_eq!(c, " a /* b */ c ");
        assert_eq!(rest, " tail");
        assert!(comment("/* open /* */").is_err());
    }

    #[test]
    fn records_continue_while_a_string_or_bracket_is_open() {
        // A pretty-printed frontend attribute, as XLA prints Pallas kernel metadata.
        let t = "a = f(x), fa={k={\n\"m\":\"{\\\"b\\\": 1}\"\n}}, c=1\nnext\n";
        let (r, rest) = record(t).unwrap();
        assert_eq!(r, "a = f(x), fa={k={\n\"m\":\"{\\\"b\\\": 1}\"\n}}, c=1");
        assert_eq!(rest, "next\n");
        // A line break inside a string, escaped quotes and brackets inside the string do not count.
        let t = "s=\"x\\\" ( [ {\ny\" done\r\nz";
        assert_eq!(record(t).unwrap(), ("s=\"x\\\" ( [ {\ny\" done", "z"));
        // Comments may hold brackets; a stray closer does not end or break the record.
        assert_eq!(record("a /* ( */ b) c\nd").unwrap(), ("a /* ( */ b) c", "d"));
        assert_eq!(record("last").unwrap(), ("last", ""));
    }

    #[test]
    fn an_unclosed_record_points_at_its_opener() {
        let t = "ok\nx = f(y), b={\"k\": [1,\n";
        let (_, rest) = record(t).unwrap();
        let e = match record(rest) {
            Err(nom::Err::Failure(e)) => e,
            other => panic!("{other:?}"),
        };
        assert!(e.at.starts_with("{\"k\""), "{:?}", e.at);
        assert!(e.expected.contains('}'));
        let e = match record("s=\"open\\\"") {
            Err(nom::Err::Failure(e)) => e,
            other => panic!("{other:?}"),
        };
        assert!(e.at.starts_with("\"open") && e.expected.contains('"'));
        assert!(record("/* open").is_err());
    }

    #[test]
    fn words_stop_at_punctuation() {
        assert_eq!(word("$0x8] sm").unwrap(), ("] sm", "$0x8"));
        assert_eq!(word("sm:$0xff").unwrap(), (":$0xff", "sm"));
        assert_eq!(word("-0.0,").unwrap(), (",", "-0.0"));
        assert_eq!(word("1/16]").unwrap(), ("]", "1/16"));
        assert_eq!(word("x/*c*/").unwrap(), ("/*c*/", "x"));
        assert!(word(" x").is_err());
    }
}

//! Attribute values XLA's parser reads with a grammar of their own (`ParseWindow`, `ParseAliasing`,
//! `ParseBufferDonor`): hlolint keeps every value as a token tree, so these are checked after parsing, and a value
//! XLA would reject is a syntax error here too. Values whose meaning is open-ended (backend configs, frontend
//! attributes) stay unchecked.

use crate::ir::{Module, Span};

/// The first attribute value XLA's grammar rejects: where, and what was expected there. `windows` are the spans of
/// the instructions' `window=` values, in the order of the text (the parser notes them as it goes, rather than this
/// walking every attribute of every op).
pub fn first_bad_value(m: &Module<'_>, windows: &[Span]) -> Option<(usize, String)> {
    for a in &m.attrs {
        let check = match a.key {
            "input_output_alias" => aliasing,
            "buffer_donor" => buffer_donor,
            _ => continue,
        };
        if let Err((at, what)) = check(&mut Tokens::new(value_text(m.text, a.value_span()))) {
            return Some((a.value_span().start as usize + at, what));
        }
    }
    for &span in windows {
        if let Err((at, what)) = window(value_text(m.text, span)) {
            return Some((span.start as usize + at, what));
        }
    }
    None
}

fn value_text(text: &str, span: Span) -> &str {
    text.get(span.start as usize..span.end as usize).unwrap_or("")
}

type Check = Result<(), (usize, String)>;

/// `{size=3x3 stride=1x1 pad=0_0x1_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=0x1}`: known fields, each once, each
/// `NxN...` (pad: `lo_hi` pairs, negative allowed), all of one rank.
fn window(text: &str) -> Check {
    let inner = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')).ok_or((0, "a `{...}` window".to_string()))?;
    let mut seen: Vec<&str> = Vec::new();
    let mut rank = None;
    let mut at = 1;
    for field in inner.split([' ', '\t', '\n', '\r']) {
        let start = at;
        at += field.len() + 1;
        if field.is_empty() {
            continue;
        }
        let bad = |what: &str| Err((start, what.to_string()));
        let Some((key, value)) = field.split_once('=') else { return bad("a window field `name=value`") };
        let pairs = match key {
            "pad" => true,
            "size" | "stride" | "lhs_dilate" | "rhs_dilate" | "rhs_reversal" => false,
            _ => return bad("a window field (size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal)"),
        };
        if seen.contains(&key) {
            return bad("each window field once");
        }
        seen.push(key);
        let dims: Vec<&str> = value.split('x').collect();
        let ok = dims.iter().all(|d| if pairs { is_pad(d) } else { is_uint(d) });
        if !ok {
            return bad(if pairs { "a padding `lo_hi` per dimension (`0_0x1_1`)" } else { "`NxN...` window sizes" });
        }
        if *rank.get_or_insert(dims.len()) != dims.len() {
            return bad("the same number of dimensions in every window field");
        }
    }
    Ok(())
}

fn is_uint(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn is_pad(s: &str) -> bool {
    let int = |s: &str| is_uint(s.strip_prefix('-').unwrap_or(s));
    s.split_once('_').is_some_and(|(lo, hi)| int(lo) && int(hi))
}

/// `{ {0}: (0, {}, may-alias), {1}: (1, {1}) }`: output index, then parameter number, parameter index and kind.
fn aliasing(t: &mut Tokens<'_>) -> Check {
    t.list('{', '}', |t| {
        shape_index(t)?;
        t.expect(":")?;
        t.expect("(")?;
        t.int()?;
        t.expect(",")?;
        shape_index(t)?;
        if t.eat(",") {
            t.one_of(&["may-alias", "must-alias"])?;
        }
        t.expect(")")
    })?;
    t.end()
}

/// `{ (0, {}), (1, {0}) }`: parameter number and index of each donated buffer.
fn buffer_donor(t: &mut Tokens<'_>) -> Check {
    t.list('{', '}', |t| {
        t.expect("(")?;
        t.int()?;
        t.expect(",")?;
        shape_index(t)?;
        t.expect(")")
    })?;
    t.end()
}

/// `{}` or `{0, 1}`.
fn shape_index(t: &mut Tokens<'_>) -> Check {
    t.list('{', '}', |t| t.int())
}

/// A cursor over the value's text, skipping whitespace.
struct Tokens<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str) -> Self {
        Tokens { text, at: 0 }
    }

    fn rest(&mut self) -> &'a str {
        let r = &self.text[self.at..];
        let t = r.trim_start();
        self.at += r.len() - t.len();
        t
    }

    fn fail<T>(&mut self, what: &str) -> Result<T, (usize, String)> {
        self.rest();
        Err((self.at, what.to_string()))
    }

    fn eat(&mut self, s: &str) -> bool {
        let ok = self.rest().starts_with(s);
        if ok {
            self.at += s.len();
        }
        ok
    }

    fn expect(&mut self, s: &str) -> Check {
        if self.eat(s) {
            Ok(())
        } else {
            self.fail(&format!("`{s}`"))
        }
    }

    fn int(&mut self) -> Check {
        let n = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return self.fail("a number");
        }
        self.at += n;
        Ok(())
    }

    fn one_of(&mut self, words: &[&str]) -> Check {
        match words.iter().find(|w| self.rest().starts_with(**w)) {
            Some(w) => {
                self.at += w.len();
                Ok(())
            }
            None => self.fail(&format!("one of {}", words.join(", "))),
        }
    }

    /// `open item, item, ... close` (possibly empty).
    fn list(&mut self, open: char, close: char, mut item: impl FnMut(&mut Self) -> Check) -> Check {
        self.expect(open.encode_utf8(&mut [0; 4]))?;
        let close = close.to_string();
        if self.eat(&close) {
            return Ok(());
        }
        loop {
            item(self)?;
            if self.eat(&close) {
                return Ok(());
            }
            if !self.eat(",") {
                return self.fail(&format!("`,` or `{close}`"));
            }
        }
    }

    fn end(&mut self) -> Check {
        if self.rest().is_empty() {
            Ok(())
        } else {
            self.fail("the end of the value")
        }
    }
}

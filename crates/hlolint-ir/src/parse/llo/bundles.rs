//! `*-final_bundles.txt`: the VLIW program libtpu emits for one computation, one bundle per line.
//!
//! Grammar, as printed by libtpu 0.0.42 (every form below occurs in the corpus):
//!
//! ```text
//! file     := legend? (blank | bundle)*
//! legend   := "= control target key start" NL (KEY ": " text NL)* "= control target key end" NL
//!             -- keys seen: LH loop header, LB loop body, LE loop exit, PB predicated region body,
//!             -- PF predicated region fallthrough, CT control target
//! bundle   := addr markers? ":" depth? "{" (op (";;" op)*)? "}" comment* NL
//!             --      0   :  { %0 = vdelay 1 } /* Start region 0 */
//!             --    0xb LB: > { %6347 = sst [smem:[#allocation8_spill]] %s5269_s17  ;;  ... }
//!             --  0x297 PF: > { ... }              0x105   : >> { ... }          0x5   :  {}
//! addr     := "0" | "0x" HEX                      -- consecutive; the first bundle prints as `0`
//! markers  := [A-Z]+ (" " [A-Z]+)*                -- LB on the first bundle of a loop body, PF after a
//!                                                    predicated region; the legend names LH/LE/PB/CT too
//! depth    := ">"+                                -- loop nesting of the bundle's ops; omitted on empty bundles
//!                                                    and on bundles holding only phis / the loop branch
//! op       := (dest "=")? mnemonic item*
//! dest     := "%" NAME                            -- %s4_s0 (SSA value 4 in scalar register s0), %v33596_v0,
//!                                                    %vm30_vm0, %p57_p0; %16 when the op has no register result
//! mnemonic := NAME ("." NAME | "[" DIGITS "]" | "<" ... ">")*
//!             -- vmatmul.mubr.f8e4m3fn.vlgmr.msra.gmra.mrb[0].mxu0, dma.done.wait,
//!             -- inlined_call_operand.<no memory space>, compiler-scheduling-barrier
//! item     := "," | comment | "/*" NAME "=*/" item  -- a named operand: /*hbm=*/%s39335_s1
//!           | "%" NAME | "!" item                 -- a value, a negated predicate
//!           | "(" item* ")"                       -- the predicate: (!%p57_p0), (%p28_p0, %s27_s25)
//!           | "[" item* "]"                       -- memory / attribute: [smem:[#allocation0]],
//!                                                    [vmem:[%s39334_s0 + $0x8] sm:$0xff], [#allocation6 + $0x1],
//!                                                    [thread:$0], [resolvable:$true], [1/16],
//!                                                    [shape: f8e4m3fn[1024,1024], index: 0, kind: input, ...]
//!           | WORD ":" item                       -- key:value inside brackets (sm:$0xff, ss:$16, vmem:[...])
//!           | WORD "=" item                       -- target = $region5
//!           | WORD                                -- 1023, 4294967295, -0.0, nan, 8.507059e+37, $region5, $0x1
//! comment  := "/*" (comment | any)* "*/"          -- nests; may span lines
//! ```
//!
//! Bundle comments carry structure: `Start region N` / `End region N` / `Start/End empty region N` (the LLO regions
//! before scheduling), `entry bundle: %fusion = fusion(...)`, `exit bundle: ...`. The parser keeps them as text.

use super::lex::{comment, ident, line, parse_uint, sp, word, ws};
use super::Keep;
use crate::ir::{Span, Value, ValueKind};
use crate::parse::error::{PErr, PResult};
use nom::bytes::complete::tag;
use nom::Parser;

/// A parsed final_bundles file: the legend and the bundles, before any interpretation.
#[derive(Clone, Debug, Default)]
pub struct BundleFile<'a> {
    /// `(key, meaning)` pairs of the control-target legend: `("LB", "loop body")`.
    pub legend: Vec<(&'a str, &'a str)>,
    pub bundles: Vec<Bundle<'a>>,
}

#[derive(Clone, Debug)]
pub struct Bundle<'a> {
    pub addr: u64,
    /// The address as printed (`0`, `0x1d`).
    pub addr_text: &'a str,
    /// `LB`, `PF`, ... (empty when none).
    pub markers: &'a str,
    /// Number of `>` printed: loop nesting of the bundle's ops (0 on empty bundles, see the module doc).
    pub depth: u8,
    /// Its ops, less those a partial read drops (see [`LloOp::kept`]).
    pub ops: Vec<LloOp<'a>>,
    /// How many ops it holds, listed or not.
    pub op_count: u32,
    /// The comments after `}` (text inside the delimiters).
    pub comments: Vec<&'a str>,
    pub span: Span,
}

impl<'a> Bundle<'a> {
    pub fn has_marker(&self, m: &str) -> bool {
        self.markers.split_whitespace().any(|x| x == m)
    }

    /// `Start region N` numbers named in the bundle comments (`Start/End empty region N` excluded).
    pub fn started_regions(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.comments
            .iter()
            .flat_map(|c| c.split("::"))
            .filter_map(|seg| seg.trim().strip_prefix("Start region "))
            .map(str::trim)
    }

    /// The text after `entry bundle: ` (`%fusion = fusion(%copy-done, %x.1)`), if this is the entry bundle.
    pub fn entry_comment(&self) -> Option<&'a str> {
        self.tagged_comment("entry bundle:")
    }

    pub fn exit_comment(&self) -> Option<&'a str> {
        self.tagged_comment("exit bundle:")
    }

    fn tagged_comment(&self, key: &str) -> Option<&'a str> {
        self.comments.iter().find_map(|c| {
            let at = c.find(key)?;
            let rest = &c[at + key.len()..];
            let end = rest.find(" :: ").unwrap_or(rest.len());
            Some(rest[..end].trim())
        })
    }
}

#[derive(Clone, Debug)]
pub struct LloOp<'a> {
    /// The result name without `%` (`s4_s0`, `16`).
    pub dest: Option<&'a str>,
    pub mnemonic: &'a str,
    /// Operands and attributes in order, as value trees (see the module doc for the forms).
    pub args: Vec<Value<'a>>,
    /// Free comments inside the op (`materialized constant`, `pipeline-emitter-dma-wait`, `operand 0`).
    pub comments: Vec<&'a str>,
    pub span: Span,
    pub dest_span: Span,
    pub mnemonic_span: Span,
    /// Its index in the bundle (ops a partial read drops are not all listed, so the list's index is not it).
    pub slot: u32,
    /// Did the reading keep it (`Keep`)? A dropped op is listed only when it names a `target` (its arguments are
    /// then only its `key = value` ones): the builder finds loops by their branches.
    pub kept: bool,
}

impl<'a> LloOp<'a> {
    /// The predicate group `(!%p57_p0)` / `(%p28_p0, %s27_s25)`, wherever it is printed.
    pub fn predicate(&self) -> Option<&Value<'a>> {
        self.args.iter().find(|a| matches!(a.kind, ValueKind::Group { open: '(', .. }))
    }

    /// A `/*name=*/` operand or `name = value` attribute.
    pub fn named(&self, key: &str) -> Option<&Value<'a>> {
        self.args.iter().find_map(|a| match &a.kind {
            ValueKind::KeyVal { key: k, value } if *k == key => Some(&**value),
            _ => None,
        })
    }
}

/// Parses a whole final_bundles file (`base`, the full text spans index into). Ops `keep` drops are checked against
/// the grammar as the others, but their arguments are not built into value trees (see `parse::llo::Keep`).
pub fn bundle_file(base: &str, keep: Keep) -> PResult<'_, BundleFile<'_>> {
    let mut out = BundleFile::default();
    let mut i = ws(base);
    if i.starts_with("= control target key start") {
        let (_, rest) = line(i);
        i = rest;
        loop {
            if i.is_empty() {
                return PErr::cut(i, "`= control target key end`");
            }
            let (l, rest) = line(i);
            if l.starts_with("= control target key end") {
                i = rest;
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                out.legend.push((k.trim(), v.trim()));
            }
            i = rest;
        }
    }
    out.bundles.reserve(i.len() / 120);
    loop {
        i = ws(i);
        if i.is_empty() {
            break;
        }
        let (rest, b) = bundle(base, i, keep)?;
        out.bundles.push(b);
        i = rest;
    }
    Ok((i, out))
}

fn bundle<'a>(base: &'a str, i: &'a str, keep: Keep) -> PResult<'a, Bundle<'a>> {
    let start = i;
    let (i, addr_text) = addr(i)?;
    let addr = parse_uint(addr_text).unwrap_or(0);
    let i = sp(i);
    // Markers: upper-case words up to the colon.
    let n = i.bytes().take_while(|b| b.is_ascii_uppercase() || *b == b' ' || *b == b'\t').count();
    let markers = i[..n].trim();
    let i = &i[n..];
    let (i, _) = tag(":")
        .parse(i)
        .map_err(|_: nom::Err<PErr>| nom::Err::Failure(PErr::new(i, "`:` after the bundle address")))?;
    let i = sp(i);
    let d = i.bytes().take_while(|b| *b == b'>').count();
    let i = sp(&i[d..]);
    if !i.starts_with('{') {
        return PErr::cut(i, "`{` opening the bundle");
    }
    let mut i = &i[1..];
    let mut ops = Vec::new();
    let mut slot = 0usize;
    loop {
        i = ws(i);
        if let Some(r) = i.strip_prefix('}') {
            i = r;
            break;
        }
        if let Some(r) = i.strip_prefix(";;") {
            i = r;
            continue;
        }
        let (r, mut op) = llo_op(base, i, keep)?;
        op.slot = u32::try_from(slot).unwrap_or(u32::MAX);
        slot += 1;
        if op.kept || !op.args.is_empty() {
            ops.push(op);
        }
        i = r;
    }
    let mut comments = Vec::new();
    loop {
        let r = sp(i);
        if r.starts_with("/*") {
            let (r, c) = comment(r)?;
            comments.push(c);
            i = r;
        } else {
            i = r;
            break;
        }
    }
    let end = i;
    comments.shrink_to_fit();
    let i = if let Some(r) = i.strip_prefix("\r\n") {
        r
    } else if let Some(r) = i.strip_prefix('\n') {
        r
    } else if i.is_empty() {
        i
    } else {
        return PErr::cut(i, "end of line after the bundle");
    };
    Ok((
        i,
        Bundle {
            op_count: u32::try_from(slot).unwrap_or(u32::MAX),
            addr,
            addr_text,
            markers,
            depth: d.min(255) as u8,
            ops,
            comments,
            span: Span::between(base, start, end),
        },
    ))
}

fn addr(i: &str) -> PResult<'_, &str> {
    let b = i.as_bytes();
    let n = if b.starts_with(b"0x") || b.starts_with(b"0X") {
        let h = b[2..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        if h == 0 {
            return PErr::cut(i, "a bundle address");
        }
        2 + h
    } else {
        b.iter().take_while(|c| c.is_ascii_digit()).count()
    };
    if n == 0 {
        return PErr::cut(i, "a bundle address (`0x1f`)");
    }
    Ok((&i[n..], &i[..n]))
}

/// One op inside a bundle, up to (not including) `;;` or `}`; an op `keep` drops comes without its arguments.
pub fn llo_op<'a>(base: &'a str, i: &'a str, keep: Keep) -> PResult<'a, LloOp<'a>> {
    let start = i;
    let mut dest = None;
    let mut dest_span = Span::default();
    let mut i = i;
    if let Some(r) = i.strip_prefix('%') {
        let (r, name) = ident(r).map_err(|_| nom::Err::Failure(PErr::new(r, "a result name after `%`")))?;
        let r2 = sp(r);
        if let Some(r3) = r2.strip_prefix('=') {
            dest = Some(name);
            dest_span = Span::of(base, name);
            i = sp(r3);
        } else {
            return PErr::cut(r2, "`=` after the result name");
        }
    }
    let (r, mnemonic) = mnemonic(i)?;
    let mnemonic_span = Span::of(base, mnemonic);
    let build = keep.keeps(mnemonic);
    let mut i = r;
    let mut args = Vec::new();
    let mut comments = Vec::new();
    let mut end = i;
    loop {
        i = ws(i);
        match i.as_bytes().first() {
            None => return PErr::cut(i, "`}` closing the bundle"),
            Some(b'}') => break,
            Some(b';') if i.starts_with(";;") => break,
            Some(b',') => {
                i = &i[1..];
                continue;
            }
            _ => {}
        }
        if i.starts_with("/*") {
            let (r, c) = comment(i)?;
            if let Some(key) = label(c) {
                let r = ws(r);
                let (r, v) = item(base, r, 0, build)?;
                let span = Span::between(base, i, r);
                if build {
                    args.push(Value { kind: ValueKind::KeyVal { key, value: Box::new(v) }, span });
                }
                i = r;
            } else {
                if build {
                    comments.push(c.trim());
                }
                i = r;
            }
            end = i;
            continue;
        }
        let (r, v) = item(base, i, 0, build)?;
        // `target = $region5`
        let r2 = sp(r);
        if let (Some(r3), ValueKind::Word(key)) = (r2.strip_prefix('='), &v.kind) {
            let r3 = sp(r3);
            let (r4, val) = item(base, r3, 0, build)?;
            // Kept for a dropped op too: the builder finds loops by their branches' `target = $regionN`.
            args.push(Value {
                kind: ValueKind::KeyVal { key, value: Box::new(val) },
                span: Span::between(base, i, r4),
            });
            i = r4;
        } else {
            if build {
                args.push(v);
            }
            i = r;
        }
        end = i;
    }
    args.shrink_to_fit();
    comments.shrink_to_fit();
    let span = Span::between(base, start, end);
    Ok((i, LloOp { dest, mnemonic, args, comments, span, dest_span, mnemonic_span, slot: 0, kept: build }))
}

/// `/*hbm=*/`: a comment that is only `name=` labels the next operand.
fn label(c: &str) -> Option<&str> {
    let k = c.strip_suffix('=')?;
    (!k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')).then_some(k)
}

fn mnemonic(i: &str) -> PResult<'_, &str> {
    let b = i.as_bytes();
    if !b.first().is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') {
        return PErr::cut(i, "an op mnemonic");
    }
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-') {
            k += 1;
        } else if c == b'[' {
            // mrb[0]: digits in brackets glued to the mnemonic.
            let d = b[k + 1..].iter().take_while(|x| x.is_ascii_digit()).count();
            if d > 0 && b.get(k + 1 + d) == Some(&b']') {
                k += d + 2;
            } else {
                break;
            }
        } else if c == b'<' && k > 0 && b[k - 1] == b'.' {
            // inlined_call_operand.<no memory space>
            match b[k..].iter().position(|x| *x == b'>' || *x == b'\n') {
                Some(p) if b[k + p] == b'>' => k += p + 1,
                _ => break,
            }
        } else {
            break;
        }
    }
    Ok((&i[k..], &i[..k]))
}

const MAX_NEST: u32 = 64;

/// One operand item (see the grammar in the module doc).
///
/// With `build` false the same text is accepted or refused at the same place, but no container is allocated:
/// groups and sequences come back empty, a `key: value` as its value (the decisions below read only leaf kinds and
/// local flags, never what a container holds).
fn item<'a>(base: &'a str, i: &'a str, nest: u32, build: bool) -> PResult<'a, Value<'a>> {
    if nest > MAX_NEST {
        return PErr::cut(i, "less deeply nested brackets");
    }
    let start = i;
    let Some(&c) = i.as_bytes().first() else { return PErr::cut(i, "an operand") };
    let (r, kind) = match c {
        b'%' => {
            let (r, n) = ident(&i[1..]).map_err(|_| nom::Err::Failure(PErr::new(&i[1..], "a value name after `%`")))?;
            (r, ValueKind::Name(n))
        }
        b'!' => {
            let r = &i[1..];
            let (r, v) = item(base, r, nest + 1, build)?;
            let bang = Value { kind: ValueKind::Punct(&i[..1]), span: Span::of(base, &i[..1]) };
            (r, ValueKind::Seq(if build { vec![bang, v] } else { Vec::new() }))
        }
        b'(' | b'[' | b'{' => {
            let close = match c {
                b'(' => ')',
                b'[' => ']',
                _ => '}',
            };
            let (r, items) = group(base, &i[1..], close, nest + 1, build)?;
            (r, ValueKind::Group { open: c as char, items })
        }
        b'"' => {
            let body = &i[1..];
            let mut k = 0;
            let bb = body.as_bytes();
            while k < bb.len() && bb[k] != b'"' {
                k += if bb[k] == b'\\' { 2 } else { 1 };
            }
            if k >= bb.len() {
                return PErr::cut(i, "closing `\"`");
            }
            (&body[k + 1..], ValueKind::Str(&body[..k]))
        }
        b')' | b']' | b'}' | b',' | b';' | b':' | b'=' => return PErr::cut(i, "an operand"),
        _ => match word(i) {
            Ok((r, w)) => (r, ValueKind::Word(w)),
            Err(_) => {
                // A single punctuation character (`/` not starting a comment cannot reach here; `+` is a word).
                let n = i.chars().next().map(char::len_utf8).unwrap_or(1);
                (&i[n..], ValueKind::Punct(&i[..n]))
            }
        },
    };
    let mut v = Value { kind, span: Span::between(base, start, r) };
    let mut r = r;
    let mut keyval = false;
    // key:value (sm:$0xff, vmem:[...], shape: bf16[8,128])
    if let (Some(after), ValueKind::Word(key)) = (r.strip_prefix(':'), &v.kind) {
        let key = *key;
        let after = sp(after);
        let (r2, val) = if matches!(after.as_bytes().first(), None | Some(b']' | b')' | b'}' | b',' | b';')) {
            (after, Value { kind: ValueKind::Word(&after[..0]), span: Span::of(base, &after[..0]) })
        } else {
            item(base, after, nest + 1, build)?
        };
        let span = Span::between(base, start, r2);
        v = match build {
            true => Value { kind: ValueKind::KeyVal { key, value: Box::new(val) }, span },
            false => Value { kind: val.kind, span },
        };
        keyval = true;
        r = r2;
    }
    // Glued brackets: f8e4m3fn[1024,1024].
    while matches!(r.as_bytes().first(), Some(b'[')) && !keyval {
        let (r2, g) = item(base, r, nest + 1, build)?;
        let span = Span::between(base, start, r2);
        if !build {
            v = Value { kind: ValueKind::Seq(Vec::new()), span };
            r = r2;
            continue;
        }
        v = match v.kind {
            ValueKind::Seq(mut xs) => {
                xs.push(g);
                Value { kind: ValueKind::Seq(xs), span }
            }
            other => Value { kind: ValueKind::Seq(vec![Value { kind: other, span: v.span }, g]), span },
        };
        r = r2;
    }
    Ok((r, v))
}

fn group<'a>(base: &'a str, mut i: &'a str, close: char, nest: u32, build: bool) -> PResult<'a, Vec<Value<'a>>> {
    let mut items = Vec::new();
    let mut label_key: Option<&'a str> = None;
    let want = match close {
        ')' => "`)`",
        ']' => "`]`",
        _ => "`}`",
    };
    loop {
        i = ws(i);
        let Some(&c) = i.as_bytes().first() else {
            return PErr::cut(i, want);
        };
        if c as char == close {
            // A folder holds millions of these trees until its rules ran: no spare capacity.
            items.shrink_to_fit();
            return Ok((&i[1..], items));
        }
        if c == b',' {
            i = &i[1..];
            continue;
        }
        if i.starts_with("/*") {
            let (r, cm) = comment(i)?;
            label_key = label(cm);
            i = r;
            continue;
        }
        if matches!(c, b')' | b']' | b'}' | b';') {
            return PErr::cut(i, want);
        }
        let (r, v) = item(base, i, nest, build)?;
        if !build {
            label_key = None;
            i = r;
            continue;
        }
        let v = match label_key.take() {
            Some(key) => Value { kind: ValueKind::KeyVal { key, value: Box::new(v) }, span: Span::between(base, i, r) },
            None => v,
        };
        items.push(v);
        i = r;
    }
}

/// Every `%name` inside a value tree, in textual order, with its span.
pub fn names<'a>(v: &Value<'a>, out: &mut Vec<(&'a str, Span)>) {
    match &v.kind {
        ValueKind::Name(n) => out.push((n, Span::new(v.span.start as usize + 1, v.span.end as usize))),
        ValueKind::Group { items, .. } | ValueKind::Seq(items) => items.iter().for_each(|x| names(x, out)),
        ValueKind::KeyVal { value, .. } => names(value, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(s: &str) -> LloOp<'_> {
        let (rest, o) = llo_op(s, s, Keep::All).unwrap();
        assert!(rest.trim_start().starts_with('}') || rest.trim_start().starts_with(";;"), "rest: {rest}");
        o
    }

    #[test]
    fn ops_of_every_form() {
        let o = op("%s4_s0 = smov 0 /* materialized constant */ }");
        assert_eq!(
            (o.dest, o.mnemonic, o.args.len(), o.comments[0]),
            (Some("s4_s0"), "smov", 1, "materialized constant")
        );

        let o = op("%s12_s2 = sld [smem:[#allocation3]] (!%p57_p0)  ;;");
        assert_eq!(o.mnemonic, "sld");
        assert!(o.predicate().is_some());
        let ValueKind::Group { open: '[', items } = &o.args[0].kind else { panic!() };
        assert!(matches!(items[0].kind, ValueKind::KeyVal { key: "smem", .. }));

        let o = op("%10373 = vmatmul.mubr.f8e4m3fn.vlgmr.msra.gmra.mrb[0].mxu0 %v37124_v53 }");
        assert_eq!(o.mnemonic, "vmatmul.mubr.f8e4m3fn.vlgmr.msra.gmra.mrb[0].mxu0");

        let o = op("%s1_s1 = inlined_call_operand.<no memory space> [shape: u32[], index: 1, kind: input, shape index: {}] /* operand 1 */ }");
        assert_eq!(o.mnemonic, "inlined_call_operand.<no memory space>");

        let o = op("%53 = dma.smem_to_host_iova [thread:$0]  /*src_address=*/%s33_s15, /*host_iova_low=*/%s23_s8, /*size_in_granules=*/1 }");
        assert_eq!(o.named("size_in_granules").and_then(|v| v.word()), Some("1"));
        assert!(matches!(o.named("src_address").map(|v| &v.kind), Some(ValueKind::Name("s33_s15"))));

        let o = op("%5 = sbr.rel (%p57_p0) target = $region5 }");
        assert_eq!(o.named("target").and_then(|v| v.word()), Some("$region5"));

        let o = op("%v9266_v20 = vsel /*vm=*/%vm9262_vm3, /*on_true_vy=*/nan, /*on_false_vx=*/%v9265_v17 }");
        assert_eq!(o.args.len(), 3);

        let o = op("%39341 = vxpose.binary.xlu0.c.b16.start [1/16] /*vx=*/%v40371_v54, /*width=*/128 }");
        assert_eq!(o.args.len(), 3);

        let o = op("%s6378_s25 = smov (%p28_p0, %s27_s25), 0 }");
        let mut ns = Vec::new();
        o.args.iter().for_each(|a| names(a, &mut ns));
        assert_eq!(ns.iter().map(|n| n.0).collect::<Vec<_>>(), ["p28_p0", "s27_s25"]);

        let o = op("%v4951_v1 = vld [vmem:[%s5731_s28 + $0x4] ss:$16 sps:$4 sm:$0xff] /* combine strided load */ }");
        let mut ns = Vec::new();
        o.args.iter().for_each(|a| names(a, &mut ns));
        assert_eq!(ns[0].0, "s5731_s28");
    }

    #[test]
    fn bundles_with_markers_and_comments() {
        let t = "= control target key start\nLB: loop body\n= control target key end\n\n     0   :  { %0 = vdelay 1 } /* Start region 0 */\n   0xb LB: > { %1 = sfence  ;;  %2 = sfence /* a\nb /* c */ */ }\n   0xc   :  {}";
        let (_, f) = bundle_file(t, Keep::All).unwrap();
        assert_eq!(f.legend, [("LB", "loop body")]);
        assert_eq!(f.bundles.len(), 3);
        assert_eq!(
            (f.bundles[1].addr, f.bundles[1].markers, f.bundles[1].depth, f.bundles[1].ops.len()),
            (11, "LB", 1, 2)
        );
        assert_eq!(f.bundles[0].started_regions().collect::<Vec<_>>(), ["0"]);
        assert!(f.bundles[2].ops.is_empty());
    }
}

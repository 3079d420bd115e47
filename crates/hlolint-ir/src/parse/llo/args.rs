//! An LLO op's printed arguments as the bundle grammar keeps them (the `args` attribute), read without meaning:
//! named operands (`/*hbm=*/%s1`), `key = value` attributes, memory references (`[smem:[#allocation3]]`), the
//! predicate (`(!%p57_p0)`), the bundle address and slot. What a mnemonic means is `semantic::llo`'s.

use crate::ir::{Op, Value, ValueKind};
use serde::Serialize;
use std::fmt::Write;

/// The op's operands and attributes in printed order (the `args` attribute).
pub fn args<'m, 'a>(op: &'m Op<'a>) -> &'m [Value<'a>] {
    op.attr("args").map(Value::items).unwrap_or(&[])
}

/// A named operand (`/*hbm=*/%s1` → `hbm`) or `key = value` attribute (`target`).
pub fn named<'m, 'a>(op: &'m Op<'a>, key: &str) -> Option<&'m Value<'a>> {
    args(op).iter().find_map(|a| match &a.kind {
        ValueKind::KeyVal { key: k, value } if *k == key => Some(&**value),
        _ => None,
    })
}

/// The arguments that are not a parenthesised group: a wait's flag and amount, a sync's flag and amount.
pub fn plain_args<'m, 'a>(op: &'m Op<'a>) -> impl Iterator<Item = &'m Value<'a>> + 'm {
    args(op).iter().filter(|a| !matches!(a.kind, ValueKind::Group { open: '(', .. }))
}

/// The op's predicate: `(!%p57_p0)` → `("p57_p0", negated)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Predicate<'a> {
    pub reg: &'a str,
    pub negated: bool,
}

pub fn predicate<'a>(op: &Op<'a>) -> Option<Predicate<'a>> {
    let first = op.attr("pred")?.items().first()?;
    match &first.kind {
        ValueKind::Name(n) => Some(Predicate { reg: n, negated: false }),
        ValueKind::Seq(xs) => match xs.as_slice() {
            [Value { kind: ValueKind::Punct("!"), .. }, Value { kind: ValueKind::Name(n), .. }] => {
                Some(Predicate { reg: n, negated: true })
            }
            _ => None,
        },
        _ => None,
    }
}

/// Memory references among the args: `[smem:[#allocation3]]` → `("smem", address group)`.
pub fn memrefs<'m, 'a>(op: &'m Op<'a>) -> impl Iterator<Item = (&'a str, &'m Value<'a>)> + 'm {
    args(op).iter().filter_map(|a| match &a.kind {
        ValueKind::Group { open: '[', items } => items.first().and_then(|f| match &f.kind {
            ValueKind::KeyVal { key, value } if is_space(key) => Some((*key, &**value)),
            _ => None,
        }),
        _ => None,
    })
}

fn is_space(k: &str) -> bool {
    matches!(k, "smem" | "vmem" | "hbm" | "cmem" | "sflag" | "imem" | "spmem" | "tilespmem") || k.ends_with("mem")
}

/// The bundle address and slot of an op.
pub fn position(op: &Op<'_>) -> Option<(u64, u32)> {
    let issue = op.issue?;
    Some((super::lex::parse_uint(issue.bundle)?, issue.slot))
}

/// A value as compact text: `[#allocation6 + $0x1]` → `#allocation6+$0x1`, `%s4_s0` → `%s4_s0`.
pub fn flag_text(v: &Value<'_>) -> String {
    let mut s = String::new();
    match &v.kind {
        ValueKind::Group { open: '[', items } => {
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    s.push(' ');
                }
                write_value(&mut s, it);
            }
        }
        _ => write_value(&mut s, v),
    }
    s
}

fn write_value(s: &mut String, v: &Value<'_>) {
    match &v.kind {
        ValueKind::Word(w) | ValueKind::Punct(w) | ValueKind::Raw(w) => s.push_str(w),
        ValueKind::Str(w) => {
            let _ = write!(s, "\"{w}\"");
        }
        ValueKind::Name(n) => {
            s.push('%');
            s.push_str(n);
        }
        ValueKind::Typed { value, ty } => {
            write_value(s, value);
            let _ = write!(s, " : {ty}");
        }
        ValueKind::Group { open: '[', items } if items.len() == 1 => write_value(s, &items[0]),
        ValueKind::Group { open, items } => {
            let close = match open {
                '(' => ')',
                '[' => ']',
                _ => '}',
            };
            s.push(*open);
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    s.push(' ');
                }
                write_value(s, it);
            }
            s.push(close);
        }
        ValueKind::KeyVal { key, value } => {
            s.push_str(key);
            s.push(':');
            write_value(s, value);
        }
        ValueKind::Seq(xs) => xs.iter().for_each(|x| write_value(s, x)),
    }
}

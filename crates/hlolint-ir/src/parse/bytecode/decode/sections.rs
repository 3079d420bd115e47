//! The header's tables: the section table, strings, dialects and op names, resources and native properties.

use super::super::reader;
use super::{
    BytecodeError, OpName, Reader, K_DIALECT_VERSIONING, K_ELIDE_UNKNOWN_BLOCK_ARG_LOCATION, K_NATIVE_PROPERTIES, R,
};
use std::rc::Rc;

/// MLIR bytecode opens with `ML\xefR`.
pub(super) fn check_magic(bytes: &[u8]) -> R<()> {
    if bytes.len() >= 4 && &bytes[..4] == b"ML\xefR" {
        return Ok(());
    }
    let found =
        if bytes.is_empty() { "an empty body".to_string() } else { format!("{:02X?}", &bytes[..bytes.len().min(4)]) };
    Err(BytecodeError::BadMagic { found })
}

pub(super) fn header_error(offset: usize, message: String) -> BytecodeError {
    BytecodeError::Malformed { offset, section: "header", message }
}

/// The sections of a bytecode file by id: the five every file has, the optional resources (both or neither) and
/// properties (required from version [`K_NATIVE_PROPERTIES`]).
pub(super) struct Sections<'b> {
    pub(super) strings: Reader<'b>,
    pub(super) dialects: Reader<'b>,
    pub(super) attrs: Reader<'b>,
    pub(super) attr_offsets: Reader<'b>,
    pub(super) ir: Reader<'b>,
    pub(super) resources: Option<Reader<'b>>,
    pub(super) resource_offsets: Option<Reader<'b>>,
    pub(super) properties: Option<Reader<'b>>,
    /// The offset after the last section (where a missing one is reported).
    pub(super) end: usize,
}

impl<'b> Sections<'b> {
    pub(super) fn read(r: &mut Reader<'b>, version: u64) -> R<Sections<'b>> {
        let mut sections: [Option<Reader<'b>>; 9] = Default::default();
        while !r.is_empty() {
            let at = r.offset();
            let (id, data) = r.section()?;
            let slot = sections
                .get_mut(id as usize)
                .ok_or_else(|| header_error(at, format!("unknown section id {id} (known: 0 to 8)")))?;
            if slot.is_some() {
                return Err(header_error(at, format!("duplicate {}", reader::section_name(id))));
            }
            *slot = Some(data);
        }
        let end = r.offset();
        let mut take = |id: usize| -> R<Reader<'b>> {
            sections[id].take().ok_or_else(|| header_error(end, format!("missing {}", reader::section_name(id as u8))))
        };
        let (strings, dialects, attrs, attr_offsets, ir) = (take(0)?, take(1)?, take(2)?, take(3)?, take(4)?);
        let properties = sections[8].take();
        if version >= K_NATIVE_PROPERTIES && properties.is_none() {
            return Err(header_error(
                end,
                format!("missing properties section (required from version {K_NATIVE_PROPERTIES})"),
            ));
        }
        Ok(Sections {
            strings,
            dialects,
            attrs,
            attr_offsets,
            ir,
            resources: sections[5].take(),
            resource_offsets: sections[6].take(),
            properties,
            end,
        })
    }
}

pub(super) fn read_strings(r: &mut Reader<'_>) -> R<Vec<Rc<str>>> {
    let n = r.count("string")?;
    let mut sizes = Vec::with_capacity(n);
    for _ in 0..n {
        sizes.push(r.varint()?);
    }
    // Sizes are stored in reverse order; string data (each with its NUL) fills the end of the section.
    let (data, _) = r.bytes(r.remaining() as u64)?;
    let total: u64 = sizes.iter().fold(0u64, |a, &s| a.saturating_add(s));
    if total != data.len() as u64 {
        return Err(r.err(format!("string sizes add up to {total} bytes but the section holds {}", data.len())));
    }
    let mut out: Vec<Rc<str>> = Vec::with_capacity(n);
    let mut pos = 0usize;
    for &size in sizes.iter().rev() {
        let s = &data[pos..pos + size as usize];
        pos += size as usize;
        let s = s.strip_suffix(&[0]).unwrap_or(s);
        out.push(Rc::from(String::from_utf8_lossy(s).as_ref()));
    }
    Ok(out)
}

pub(super) type Dialects = (Vec<Rc<str>>, Vec<Option<Vec<u8>>>, Vec<OpName>);

pub(super) fn read_dialects(r: &mut Reader<'_>, version: u64, strings: &[Rc<str>]) -> R<Dialects> {
    let string = |r: &Reader<'_>, i: u64| -> R<Rc<str>> {
        strings
            .get(i as usize)
            .cloned()
            .ok_or_else(|| r.err(format!("string index {i} out of range ({} strings)", strings.len())))
    };
    let n = r.count("dialect")?;
    let mut names = Vec::with_capacity(n);
    let mut versions = Vec::with_capacity(n);
    for _ in 0..n {
        if version < K_DIALECT_VERSIONING {
            let i = r.varint()?;
            names.push(string(r, i)?);
            versions.push(None);
            continue;
        }
        let (i, has_version) = r.varint_flag()?;
        names.push(string(r, i)?);
        if has_version {
            let at = r.offset();
            let (id, mut v) = r.section()?;
            if id != 7 {
                return Err(BytecodeError::Malformed {
                    offset: at,
                    section: "dialect section",
                    message: format!("expected a dialect version section (id 7), found id {id}"),
                });
            }
            let (bytes, _) = v.bytes(v.remaining() as u64)?;
            versions.push(Some(bytes.to_vec()));
        } else {
            versions.push(None);
        }
    }
    if version >= K_ELIDE_UNKNOWN_BLOCK_ARG_LOCATION {
        let _num_ops = r.varint()?;
    }
    let mut ops = Vec::new();
    while !r.is_empty() {
        let dialect = r.varint()? as usize;
        if dialect >= names.len() {
            return Err(r.err(format!("dialect index {dialect} out of range ({} dialects)", names.len())));
        }
        let count = r.count("operation name")?;
        for _ in 0..count {
            let (name, registered) = if version < K_NATIVE_PROPERTIES {
                let i = r.varint()?;
                (string(r, i)?, None)
            } else {
                let (i, reg) = r.varint_flag()?;
                (string(r, i)?, Some(reg))
            };
            ops.push(OpName { dialect, name, registered, interned: None });
        }
    }
    Ok((names, versions, ops))
}

/// Validates the resource sections and returns the dialect resource keys in handle order.
pub(super) fn read_resources(
    mut data: Reader<'_>,
    mut offsets: Reader<'_>,
    strings: &[Rc<str>],
    dialects: &[Rc<str>],
) -> R<Vec<Rc<str>>> {
    let string = |r: &Reader<'_>, i: u64| -> R<Rc<str>> {
        strings
            .get(i as usize)
            .cloned()
            .ok_or_else(|| r.err(format!("string index {i} out of range ({} strings)", strings.len())))
    };
    let mut keys = Vec::new();
    let group = |offsets: &mut Reader<'_>, data: &mut Reader<'_>, keep: bool, keys: &mut Vec<Rc<str>>| -> R<()> {
        let n = offsets.count("resource")?;
        for _ in 0..n {
            let k = offsets.varint()?;
            let key = string(offsets, k)?;
            let size = offsets.varint()?;
            let _kind = offsets.byte()?;
            data.bytes(size)?;
            if keep {
                keys.push(key);
            }
        }
        Ok(())
    };
    let external = offsets.count("external resource group")?;
    for _ in 0..external {
        let k = offsets.varint()?;
        string(&offsets, k)?;
        group(&mut offsets, &mut data, false, &mut keys)?;
    }
    while !offsets.is_empty() {
        let d = offsets.varint()?;
        if d as usize >= dialects.len() {
            return Err(offsets.err(format!("dialect index {d} out of range ({} dialects)", dialects.len())));
        }
        group(&mut offsets, &mut data, true, &mut keys)?;
    }
    Ok(keys)
}

pub(super) fn read_properties(mut r: Reader<'_>) -> R<Vec<(&[u8], usize)>> {
    if r.is_empty() {
        return Ok(Vec::new());
    }
    let n = r.count("properties entry")?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let size = r.varint()?;
        out.push(r.bytes(size)?);
    }
    if !r.is_empty() {
        return Err(r.err("trailing data in the properties section"));
    }
    Ok(out)
}

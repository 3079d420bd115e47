//! The primitives of the bytecode format: bounded byte reads, prefix varints, zigzag varints, null-terminated
//! strings and sections. Every read checks the remaining length first, and every count read with `count` is
//! bounded by the bytes left (each counted element takes at least one byte), so a hostile length field can
//! neither read out of bounds nor make us allocate more than the input justifies.

use super::error::BytecodeError;

pub(crate) type R<T> = Result<T, BytecodeError>;

/// Padding byte used before aligned sections and blobs.
pub(crate) const ALIGNMENT_BYTE: u8 = 0xCB;

/// A cursor over one slice of the bytecode. `base` is the slice's offset in the whole bytecode, so errors name
/// absolute byte offsets; `what` names the section being read.
#[derive(Clone)]
pub(crate) struct Reader<'b> {
    data: &'b [u8],
    pos: usize,
    base: usize,
    what: &'static str,
}

impl<'b> Reader<'b> {
    pub fn new(data: &'b [u8], base: usize, what: &'static str) -> Self {
        Reader { data, pos: 0, base, what }
    }

    /// A reader over `data`, a slice previously returned by this reader (or one of its parents) at absolute
    /// offset `base`.
    pub fn sub(&self, data: &'b [u8], base: usize, what: &'static str) -> Reader<'b> {
        Reader { data, pos: 0, base, what }
    }

    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    pub fn err(&self, message: impl Into<String>) -> BytecodeError {
        BytecodeError::Malformed { offset: self.offset(), section: self.what, message: message.into() }
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn byte(&mut self) -> R<u8> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.err("unexpected end of data while reading a byte")),
        }
    }

    /// `n` bytes and their absolute offset.
    pub fn bytes(&mut self, n: u64) -> R<(&'b [u8], usize)> {
        if n > self.remaining() as u64 {
            return Err(self.err(format!("length {n} exceeds the {} bytes left", self.remaining())));
        }
        let at = self.offset();
        let s = &self.data[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok((s, at))
    }

    /// A PrefixVarInt: the count of trailing zero bits of the first byte is the number of extra bytes.
    pub fn varint(&mut self) -> R<u64> {
        let first = self.byte()?;
        if first & 1 == 1 {
            return Ok((first >> 1) as u64);
        }
        if first == 0 {
            let (b, _) = self.bytes(8)?;
            let mut v = [0u8; 8];
            v.copy_from_slice(b);
            return Ok(u64::from_le_bytes(v));
        }
        let extra = first.trailing_zeros() as usize;
        let (rest, _) = self.bytes(extra as u64)?;
        let mut buf = [0u8; 8];
        buf[0] = first;
        buf[1..=extra].copy_from_slice(rest);
        Ok(u64::from_le_bytes(buf) >> (extra + 1))
    }

    /// A zigzag-encoded signed varint.
    pub fn svarint(&mut self) -> R<i64> {
        let v = self.varint()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// `(value << 1) | flag`.
    pub fn varint_flag(&mut self) -> R<(u64, bool)> {
        let v = self.varint()?;
        Ok((v >> 1, v & 1 == 1))
    }

    /// A count of elements that each take at least one byte of this reader: larger than the bytes left means
    /// the input is corrupt (and is refused before anything is allocated for it).
    pub fn count(&mut self, what: &str) -> R<usize> {
        let at = self.offset();
        let n = self.varint()?;
        self.check_count(n, what, at)
    }

    pub fn check_count(&self, n: u64, what: &str, at: usize) -> R<usize> {
        if n > self.remaining() as u64 {
            return Err(BytecodeError::Malformed {
                offset: at,
                section: self.what,
                message: format!("{what} count {n} is larger than the {} bytes left", self.remaining()),
            });
        }
        Ok(n as usize)
    }

    /// A string terminated by a NUL byte (not included).
    pub fn cstr(&mut self) -> R<&'b [u8]> {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                self.pos += n + 1;
                Ok(&rest[..n])
            }
            None => Err(self.err("string without a terminating NUL byte")),
        }
    }

    /// Skips `0xCB` padding until the absolute offset is a multiple of `align`.
    fn align_to(&mut self, align: u64) -> R<()> {
        if align == 0 || !align.is_power_of_two() {
            return Err(self.err(format!("alignment {align} is not a power of two")));
        }
        while (self.offset() as u64) % align != 0 {
            let b = self.byte()?;
            if b != ALIGNMENT_BYTE {
                return Err(self.err(format!("expected alignment padding byte 0xCB, found 0x{b:02X}")));
            }
        }
        Ok(())
    }

    /// A section header and its data: `id | hasAlign << 7`, length, optional alignment and padding, data.
    pub fn section(&mut self) -> R<(u8, Reader<'b>)> {
        let id_and_align = self.byte()?;
        let len = self.varint()?;
        let id = id_and_align & 0x7f;
        if id_and_align & 0x80 != 0 {
            let align = self.varint()?;
            self.align_to(align)?;
        }
        let (data, at) = self.bytes(len)?;
        Ok((id, self.sub(data, at, section_name(id))))
    }
}

pub(crate) fn section_name(id: u8) -> &'static str {
    match id {
        0 => "string section",
        1 => "dialect section",
        2 => "attribute/type section",
        3 => "attribute/type offset section",
        4 => "IR section",
        5 => "resource section",
        6 => "resource offset section",
        7 => "dialect version section",
        8 => "properties section",
        _ => "unknown section",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: u64) -> Vec<u8> {
        // Reference encoder written from the format description.
        if v < (1 << 7) {
            return vec![((v << 1) | 1) as u8];
        }
        for extra in 1..8u32 {
            if v < (1u64 << (7 * (extra + 1))) {
                let x = ((v << 1) | 1) << extra;
                return x.to_le_bytes()[..=extra as usize].to_vec();
            }
        }
        let mut out = vec![0u8];
        out.extend_from_slice(&v.to_le_bytes());
        out
    }

    #[test]
    fn varints_round_trip() {
        for v in [0u64, 1, 63, 64, 127, 128, 300, 16383, 16384, 1 << 30, 1 << 49, (1 << 56) - 1, 1 << 56, u64::MAX] {
            let bytes = enc(v);
            let mut r = Reader::new(&bytes, 0, "test");
            assert_eq!(r.varint().unwrap(), v, "{v} encoded as {bytes:?}");
            assert!(r.is_empty());
        }
    }

    #[test]
    fn signed_varints_zigzag() {
        for v in [0i64, -1, 1, -64, 64, i64::MIN, i64::MAX] {
            let z = ((v << 1) ^ (v >> 63)) as u64;
            let bytes = enc(z);
            assert_eq!(Reader::new(&bytes, 0, "t").svarint().unwrap(), v);
        }
    }

    #[test]
    fn truncated_varint_is_an_error() {
        let mut r = Reader::new(&[0b0000_0100, 1], 0, "t");
        assert!(r.varint().is_err());
        let mut r = Reader::new(&[0u8, 1, 2], 0, "t");
        assert!(r.varint().is_err());
    }

    #[test]
    fn counts_are_bounded_by_the_input() {
        let bytes = enc(1000);
        let mut r = Reader::new(&bytes, 0, "t");
        let e = r.count("element").unwrap_err().to_string();
        assert!(e.contains("element count 1000"), "{e}");
    }
}

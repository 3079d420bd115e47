//! Element types, shared by every layer: HLO spells them `f8e4m3fn`, MLIR `f8E4M3FN`, LLO `f8e4m3fn`/`bf16`.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Pred,
    S1,
    S2,
    S4,
    S8,
    S16,
    S32,
    S64,
    U1,
    U2,
    U4,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
    F8E5M2,
    F8E4M3,
    F8E4M3FN,
    F8E4M3B11FNUZ,
    F8E3M4,
    F8E5M2FNUZ,
    F8E4M3FNUZ,
    F4E2M1FN,
    F8E8M0FNU,
    C64,
    C128,
    Token,
    Opaque,
    /// MLIR `index`.
    Index,
}

use DType::*;

const TABLE: &[(DType, &str)] = &[
    (Pred, "pred"),
    (S1, "s1"),
    (S2, "s2"),
    (S4, "s4"),
    (S8, "s8"),
    (S16, "s16"),
    (S32, "s32"),
    (S64, "s64"),
    (U1, "u1"),
    (U2, "u2"),
    (U4, "u4"),
    (U8, "u8"),
    (U16, "u16"),
    (U32, "u32"),
    (U64, "u64"),
    (F16, "f16"),
    (BF16, "bf16"),
    (F32, "f32"),
    (F64, "f64"),
    (F8E5M2, "f8e5m2"),
    (F8E4M3, "f8e4m3"),
    (F8E4M3FN, "f8e4m3fn"),
    (F8E4M3B11FNUZ, "f8e4m3b11fnuz"),
    (F8E3M4, "f8e3m4"),
    (F8E5M2FNUZ, "f8e5m2fnuz"),
    (F8E4M3FNUZ, "f8e4m3fnuz"),
    (F4E2M1FN, "f4e2m1fn"),
    (F8E8M0FNU, "f8e8m0fnu"),
    (C64, "c64"),
    (C128, "c128"),
    (Token, "token"),
    (Opaque, "opaque"),
    (Index, "index"),
];

impl DType {
    /// The HLO spelling (`f8e4m3fn`), which is also the canonical name hlolint prints and rules match.
    pub fn name(self) -> &'static str {
        TABLE.iter().find(|(d, _)| *d == self).map(|(_, n)| *n).unwrap_or("?")
    }

    /// Parses an HLO primitive type name exactly as XLA's lexer does (case-sensitive).
    pub fn from_hlo(s: &str) -> Option<DType> {
        if s == "index" {
            return None;
        }
        TABLE.iter().find(|(_, n)| *n == s).map(|(d, _)| *d)
    }

    /// Parses an MLIR builtin element type (`f8E4M3FN`, `bf16`, `i32`, `ui8`, `i1`, `index`, `complex<f32>` is not
    /// an element type here). Integer types map to signed HLO types, `ui` to unsigned, `i1` to pred.
    pub fn from_mlir(s: &str) -> Option<DType> {
        if s == "index" {
            return Some(Index);
        }
        if let Some(bits) = s.strip_prefix("ui") {
            return int_type(bits, false);
        }
        if let Some(bits) = s.strip_prefix("si") {
            return int_type(bits, true);
        }
        if let Some(bits) = s.strip_prefix('i') {
            if bits == "1" {
                return Some(Pred);
            }
            return int_type(bits, true);
        }
        let lower = s.to_ascii_lowercase();
        DType::from_hlo(&lower)
    }

    pub fn is_f8(self) -> bool {
        matches!(self, F8E5M2 | F8E4M3 | F8E4M3FN | F8E4M3B11FNUZ | F8E3M4 | F8E5M2FNUZ | F8E4M3FNUZ | F8E8M0FNU)
    }

    pub fn is_float(self) -> bool {
        self.is_f8() || matches!(self, F16 | BF16 | F32 | F64 | F4E2M1FN)
    }

    /// Bits per element (0 for token/opaque/index).
    pub fn bits(self) -> u32 {
        match self {
            Pred | S8 | U8 => 8,
            S1 | U1 => 1,
            S2 | U2 => 2,
            S4 | U4 | F4E2M1FN => 4,
            S16 | U16 | F16 | BF16 => 16,
            S32 | U32 | F32 => 32,
            S64 | U64 | F64 | C64 => 64,
            C128 => 128,
            F8E5M2 | F8E4M3 | F8E4M3FN | F8E4M3B11FNUZ | F8E3M4 | F8E5M2FNUZ | F8E4M3FNUZ | F8E8M0FNU => 8,
            Token | Opaque | Index => 0,
        }
    }

    pub fn all() -> impl Iterator<Item = DType> {
        TABLE.iter().map(|(d, _)| *d)
    }
}

fn int_type(bits: &str, signed: bool) -> Option<DType> {
    Some(match (bits, signed) {
        ("1", true) => S1,
        ("2", true) => S2,
        ("4", true) => S4,
        ("8", true) => S8,
        ("16", true) => S16,
        ("32", true) => S32,
        ("64", true) => S64,
        ("1", false) => U1,
        ("2", false) => U2,
        ("4", false) => U4,
        ("8", false) => U8,
        ("16", false) => U16,
        ("32", false) => U32,
        ("64", false) => U64,
        _ => return None,
    })
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for DType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hlo_and_mlir_spellings_agree() {
        assert_eq!(DType::from_hlo("f8e4m3fn"), Some(F8E4M3FN));
        assert_eq!(DType::from_mlir("f8E4M3FN"), Some(F8E4M3FN));
        assert_eq!(DType::from_mlir("i1"), Some(Pred));
        assert_eq!(DType::from_mlir("ui8"), Some(U8));
        assert_eq!(DType::from_mlir("index"), Some(Index));
        assert_eq!(DType::from_hlo("F32"), None);
        assert_eq!(DType::from_hlo("tuple"), None);
        for d in DType::all().filter(|d| *d != Index) {
            assert_eq!(DType::from_hlo(d.name()), Some(d));
        }
    }
}

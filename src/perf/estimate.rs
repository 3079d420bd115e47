//! A number the model may know exactly, only within bounds, or not at all (with the reason): never a guess.

use serde::Serialize;
use std::collections::BTreeMap;

/// `{"exact": 64}`, `{"range": {"min": 0, "max": 64}}` or `{"unknown": "why"}` in JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Estimate {
    Exact(u64),
    Range { min: u64, max: u64 },
    Unknown(String),
}

impl Estimate {
    pub fn unknown(why: impl Into<String>) -> Estimate {
        Estimate::Unknown(why.into())
    }

    /// `min..=max`, exact when they meet.
    pub fn range(min: u64, max: u64) -> Estimate {
        if min == max {
            Estimate::Exact(min)
        } else {
            Estimate::Range { min: min.min(max), max: max.max(min) }
        }
    }

    pub fn bounds(&self) -> Option<(u64, u64)> {
        match self {
            Estimate::Exact(v) => Some((*v, *v)),
            Estimate::Range { min, max } => Some((*min, *max)),
            Estimate::Unknown(_) => None,
        }
    }

    pub fn exact(&self) -> Option<u64> {
        match self {
            Estimate::Exact(v) => Some(*v),
            _ => None,
        }
    }

    /// The upper bound, the number a prediction uses (the most work the kernel can do).
    pub fn max(&self) -> Option<u64> {
        self.bounds().map(|b| b.1)
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            Estimate::Unknown(r) => Some(r),
            _ => None,
        }
    }

    fn zip(&self, o: &Estimate, f: impl Fn(u64, u64) -> u64) -> Estimate {
        match (self.bounds(), o.bounds()) {
            (Some((a, b)), Some((c, d))) => Estimate::range(f(a, c), f(b, d)),
            _ => Estimate::Unknown(self.reason().or(o.reason()).unwrap_or_default().to_string()),
        }
    }

    pub fn add(&self, o: &Estimate) -> Estimate {
        self.zip(o, u64::saturating_add)
    }

    pub fn mul(&self, o: &Estimate) -> Estimate {
        self.zip(o, u64::saturating_mul)
    }

    pub fn scale(&self, k: u64) -> Estimate {
        self.mul(&Estimate::Exact(k))
    }

    /// The sum of `items`; zero for none.
    pub fn sum<'e>(items: impl IntoIterator<Item = &'e Estimate>) -> Estimate {
        items.into_iter().fold(Estimate::Exact(0), |a, b| a.add(b))
    }

    /// Anything from none to all of it: work inside a branch the model cannot decide.
    pub fn up_to(&self) -> Estimate {
        match self.bounds() {
            Some((_, max)) => Estimate::range(0, max),
            None => self.clone(),
        }
    }
}

/// Trip counts the user fixes (`--assume NAME=VALUE`) where the dumps cannot tell: a loop's name as the facts show
/// it (`fp8_mm_v2.1/region95`, `gmm/arg7`), or its last part alone (`region95`) for every kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Assume {
    pub values: BTreeMap<String, u64>,
}

/// An `--assume` item that does not say NAME=VALUE with a count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssumeError {
    #[error("`{0}`: expected NAME=VALUE")]
    NotNameValue(String),
    #[error("`{0}`: VALUE must be a non-negative integer")]
    NotACount(String),
}

impl Assume {
    /// Parses `NAME=VALUE` items.
    pub fn parse<'s>(items: impl IntoIterator<Item = &'s str>) -> Result<Assume, AssumeError> {
        let mut values = BTreeMap::new();
        for it in items {
            let (k, v) = it.split_once('=').ok_or_else(|| AssumeError::NotNameValue(it.to_string()))?;
            let v: u64 = v.trim().parse().map_err(|_| AssumeError::NotACount(it.to_string()))?;
            values.insert(k.trim().to_string(), v);
        }
        Ok(Assume { values })
    }

    /// The value fixed for loop `key` (`kernel/name`): the full key first, then its last part.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.values.get(key).or_else(|| self.values.get(key.rsplit('/').next()?)).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_keeps_bounds_and_reasons() {
        let e = Estimate::Exact(3).mul(&Estimate::range(2, 4));
        assert_eq!(e, Estimate::Range { min: 6, max: 12 });
        assert_eq!(Estimate::Exact(3).add(&Estimate::Exact(4)), Estimate::Exact(7));
        let u = Estimate::unknown("bound read at run time");
        assert_eq!(e.add(&u).reason(), Some("bound read at run time"));
        assert_eq!(Estimate::Exact(5).up_to(), Estimate::Range { min: 0, max: 5 });
        assert_eq!(Estimate::sum([]), Estimate::Exact(0));
        assert_eq!(serde_json::to_string(&Estimate::range(1, 2)).unwrap(), r#"{"range":{"min":1,"max":2}}"#);
        assert_eq!(serde_json::to_string(&Estimate::Exact(1)).unwrap(), r#"{"exact":1}"#);
    }

    #[test]
    fn assumptions_by_full_or_short_name() {
        let a = Assume::parse(["gmm.1/region24=8", "region95 = 4"]).unwrap();
        assert_eq!(a.get("gmm.1/region24"), Some(8));
        assert_eq!(a.get("other/region24"), None);
        assert_eq!(a.get("fp8_mm_v2.1/region95"), Some(4));
        assert_eq!(Assume::parse(["x"]).unwrap_err(), AssumeError::NotNameValue("x".into()));
        assert_eq!(Assume::parse(["x=-1"]).unwrap_err(), AssumeError::NotACount("x=-1".into()));
    }
}

//! Versions ranked per target by predicted time, each with its speedup over the target's first version
//! (`v2 1.12× v1`: v1's time over v2's, above 1 when v2 is faster).

use super::{seconds, Column};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ranking {
    pub target: String,
    /// The version the ratios are against: the target's first column.
    pub baseline: String,
    /// Fastest first.
    pub entries: Vec<Entry>,
    /// Versions of this target the model could not time (not ranked).
    pub unranked: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    pub version: String,
    /// Predicted seconds.
    pub time: f64,
    /// The baseline's time over this one's.
    pub speedup: f64,
}

impl Ranking {
    /// `v2 1.12× v1 (14.2 µs) > v1 (15.9 µs) > ...`.
    pub fn line(&self) -> String {
        let mut parts: Vec<String> = self
            .entries
            .iter()
            .map(|e| {
                if e.version == self.baseline || !e.speedup.is_finite() {
                    format!("{} ({})", e.version, seconds(e.time))
                } else {
                    format!("{} {:.2}× {} ({})", e.version, e.speedup, self.baseline, seconds(e.time))
                }
            })
            .collect();
        if !self.unranked.is_empty() {
            parts.push(format!("not timed: {}", self.unranked.join(", ")));
        }
        format!("{}: {}", self.target, parts.join(" > "))
    }
}

impl Ranking {
    /// The ranking without times (the table has them): `tpu7x, speedup over v1 (10.0 µs): v3 1.04× > v1 > ...`.
    pub fn short_line(&self) -> String {
        let base = self.entries.iter().find(|e| e.version == self.baseline);
        let mut head = format!("{}, speedup over {}", self.target, self.baseline);
        if let Some(b) = base {
            head.push_str(&format!(" ({})", seconds(b.time)));
        }
        let mut parts: Vec<String> = self
            .entries
            .iter()
            .map(|e| {
                if e.version == self.baseline || !e.speedup.is_finite() {
                    e.version.clone()
                } else {
                    format!("{} {:.2}×", e.version, e.speedup)
                }
            })
            .collect();
        if !self.unranked.is_empty() {
            parts.push(format!("not timed: {}", self.unranked.join(", ")));
        }
        format!("{head}: {}", parts.join(" > "))
    }
}

/// The rankings of the columns' targets, in the order targets first appear.
pub fn rank(columns: &[Column]) -> Vec<Ranking> {
    let mut targets: Vec<&str> = Vec::new();
    for c in columns {
        if !targets.contains(&c.target.as_str()) {
            targets.push(&c.target);
        }
    }
    targets.into_iter().filter_map(|t| rank_target(columns, t)).collect()
}

fn rank_target(columns: &[Column], target: &str) -> Option<Ranking> {
    let of: Vec<&Column> = columns.iter().filter(|c| c.target == target).collect();
    let first = of.first()?;
    let base = first.time.map(|t| t.total()).filter(|t| *t > 0.0);
    let mut entries: Vec<Entry> = of
        .iter()
        .filter_map(|c| {
            let time = c.time?.total();
            let speedup = base.map(|b| if time > 0.0 { b / time } else { f64::NAN }).unwrap_or(f64::NAN);
            Some(Entry { version: c.version.clone(), time, speedup })
        })
        .collect();
    entries.sort_by(|a, b| a.time.total_cmp(&b.time));
    let unranked = of.iter().filter(|c| c.time.is_none()).map(|c| c.version.clone()).collect();
    Some(Ranking { target: target.to_string(), baseline: first.version.clone(), entries, unranked })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::TimeSplit;

    fn col(v: &str, t: &str, secs: Option<f64>) -> Column {
        Column {
            version: v.into(),
            target: t.into(),
            time: secs.map(|s| TimeSplit::of(0.0, s, s / 2.0)),
            ..Column::default()
        }
    }

    #[test]
    fn ranked_per_target_against_the_first_version() {
        let cols = [
            col("v1", "tpu7x", Some(2.24e-5)),
            col("v2", "tpu7x", Some(2.0e-5)),
            col("v3", "tpu7x", None),
            col("v1", "v6e", Some(1.0e-5)),
            col("v2", "v6e", Some(2.0e-5)),
        ];
        let r = rank(&cols);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].target, "tpu7x");
        assert_eq!(r[0].entries.iter().map(|e| e.version.as_str()).collect::<Vec<_>>(), ["v2", "v1"]);
        assert!((r[0].entries[0].speedup - 1.12).abs() < 1e-9);
        assert_eq!(r[0].unranked, ["v3"]);
        assert_eq!(r[0].line(), "tpu7x: v2 1.12× v1 (20.0 µs) > v1 (22.4 µs) > not timed: v3");
        assert_eq!(r[1].line(), "v6e: v1 (10.0 µs) > v2 0.50× v1 (20.0 µs)");
        assert_eq!(r[0].short_line(), "tpu7x, speedup over v1 (22.4 µs): v2 1.12× > v1 > not timed: v3");
    }

    #[test]
    fn an_untimed_baseline_gives_no_ratio() {
        let r = rank(&[col("v1", "v5e", None), col("v2", "v5e", Some(1e-3))]);
        assert!(r[0].entries[0].speedup.is_nan());
        assert_eq!(r[0].unranked, ["v1"]);
        assert_eq!(r[0].line(), "v5e: v2 (1.00 ms) > not timed: v1");
    }
}

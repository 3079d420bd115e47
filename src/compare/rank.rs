//! Versions ranked per target by predicted time, each with its speedup over the target's first version
//! (`v2 1.12× v1`: v1's time over v2's, above 1 when v2 is faster). A version with error findings is marked `✗`
//! and never the pick: the fastest version is no answer when its DMAs are left unwaited.

use super::{seconds, Column, TimeSplit};
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
    /// The fastest timed version without error findings.
    pub pick: Option<String>,
    /// One sentence: why the fastest version wins (its dominant term, the term that differs most from the
    /// baseline or the runner-up) and what share of its prediction is fixed overhead.
    pub why: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    pub version: String,
    /// Predicted seconds.
    pub time: f64,
    /// The baseline's time over this one's.
    pub speedup: f64,
    /// Error findings of its rules (`✗` in the lines).
    pub errors: usize,
    /// Warnings (`!`).
    pub warnings: usize,
}

impl Entry {
    fn name(&self) -> String {
        match (self.errors, self.warnings) {
            (0, 0) => self.version.clone(),
            (0, _) => format!("{} !", self.version),
            _ => format!("{} ✗", self.version),
        }
    }
}

impl Ranking {
    /// `v2 1.12× v1 (14.2 µs) > v1 (15.9 µs) > ...`.
    pub fn line(&self) -> String {
        let mut parts: Vec<String> = self
            .entries
            .iter()
            .map(|e| {
                if e.version == self.baseline || !e.speedup.is_finite() {
                    format!("{} ({})", e.name(), seconds(e.time))
                } else {
                    format!("{} {:.2}× {} ({})", e.name(), e.speedup, self.baseline, seconds(e.time))
                }
            })
            .collect();
        if !self.unranked.is_empty() {
            parts.push(format!("not timed: {}", self.unranked.join(", ")));
        }
        format!("{}: {}{}", self.target, parts.join(" > "), self.pick_note())
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
                    e.name()
                } else {
                    format!("{} {:.2}×", e.name(), e.speedup)
                }
            })
            .collect();
        if !self.unranked.is_empty() {
            parts.push(format!("not timed: {}", self.unranked.join(", ")));
        }
        format!("{head}: {}{}", parts.join(" > "), self.pick_note())
    }

    /// `; pick v3` when some version has findings (otherwise the first of the line is the pick).
    fn pick_note(&self) -> String {
        if !self.entries.iter().any(|e| e.errors + e.warnings > 0) {
            return String::new();
        }
        let clean = self.entries.iter().any(|e| e.errors + e.warnings == 0);
        match &self.pick {
            Some(p) if clean => format!("; pick {p} (fastest without errors or warnings; ✗ errors, ! warnings)"),
            Some(p) => format!("; pick {p} (fastest without errors; ✗ errors, ! warnings)"),
            None => "; no version without errors (✗ errors, ! warnings)".to_string(),
        }
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
            Some(Entry {
                version: c.version.clone(),
                time,
                speedup,
                errors: c.verdicts.errors,
                warnings: c.verdicts.warnings,
            })
        })
        .collect();
    entries.sort_by(|a, b| a.time.total_cmp(&b.time));
    let unranked = of.iter().filter(|c| c.time.is_none()).map(|c| c.version.clone()).collect();
    // fastest without errors or warnings, else fastest without errors
    let pick = entries
        .iter()
        .find(|e| e.errors + e.warnings == 0)
        .or_else(|| entries.iter().find(|e| e.errors == 0))
        .map(|e| e.version.clone());
    let split = |v: &str| of.iter().find(|c| c.version == v).and_then(|c| c.time);
    let why = entries.first().and_then(|w| {
        let other = if w.version == first.version {
            entries.get(1)
        } else {
            entries.iter().find(|e| e.version == first.version)
        };
        why(&w.version, split(&w.version)?, other.and_then(|o| Some((o.version.as_str(), split(&o.version)?))))
    });
    // what keeps a version out of the ranking, said where the ranking is explained
    let untimed: Vec<String> =
        of.iter().filter_map(|c| Some(format!("{} is not timed: {}", c.version, c.untimed.as_ref()?))).collect();
    let why = match (why, untimed.is_empty()) {
        (w, true) => w,
        (Some(w), false) => Some(format!("{w}; {}", untimed.join("; "))),
        (None, false) => Some(untimed.join("; ")),
    };
    Some(Ranking { target: target.to_string(), baseline: first.version.clone(), entries, unranked, pick, why })
}

/// `v3 is fastest, DMA latency bound (DMA transfers 11.4 µs); against v1 its DMA transfers take 3.51 µs less;
/// fixed overhead is 6.00 µs, 34% of its 17.9 µs`.
fn why(winner: &str, w: TimeSplit, other: Option<(&str, TimeSplit)>) -> Option<String> {
    // The terms of the prediction: the larger of compute and the copies, plus exposed copies and the overhead.
    let terms = |t: &TimeSplit| {
        [("compute", t.compute), ("DMA transfers", t.copies()), ("exposed copies", t.exposed), ("XLA ops", t.xla)]
    };
    let (dominant, value) = terms(&w).into_iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let mut out = format!("{winner} is fastest, {} bound ({dominant} {})", w.bound(), seconds(value));
    if let Some((name, o)) = other {
        let diff = terms(&w)
            .into_iter()
            .zip(terms(&o))
            .map(|((label, a), (_, b))| (label, b - a))
            .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()));
        if let Some((label, d)) = diff.filter(|d| d.1.abs() > 0.0) {
            let more = if d > 0.0 { "less" } else { "more" };
            out.push_str(&format!("; against {name} its {label} take {} {more}", seconds(d.abs())));
        }
    }
    if w.predicted > 0.0 {
        let share = w.overhead / w.predicted * 100.0;
        out.push_str(&format!(
            "; fixed overhead is {}, {share:.0}% of its {}",
            seconds(w.overhead),
            seconds(w.predicted)
        ));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_version_with_errors_is_marked_and_never_the_pick() {
        let mut bug = col("bug_unwaited", "tpu7x", Some(1.0e-5));
        bug.verdicts.errors = 2;
        let mut odd = col("odd", "tpu7x", Some(1.5e-5));
        odd.verdicts.warnings = 1;
        let r = rank(&[col("v1", "tpu7x", Some(3.0e-5)), bug, odd.clone(), col("v2", "tpu7x", Some(2.0e-5))]);
        assert_eq!(r[0].entries[0].version, "bug_unwaited");
        assert_eq!(r[0].pick.as_deref(), Some("v2"));
        assert_eq!(
            r[0].short_line(),
            "tpu7x, speedup over v1 (30.0 µs): bug_unwaited ✗ 3.00× > odd ! 2.00× > v2 1.50× > v1; pick v2 (fastest \
             without errors or warnings; ✗ errors, ! warnings)"
        );
        // only versions with findings: the fastest without errors
        let mut slow_bug = col("v1", "tpu7x", Some(3.0e-5));
        slow_bug.verdicts.errors = 1;
        let r = rank(&[slow_bug, odd]);
        assert_eq!(r[0].pick.as_deref(), Some("odd"));
        assert!(r[0].short_line().ends_with("; pick odd (fastest without errors; ✗ errors, ! warnings)"));
    }

    #[test]
    fn an_untimed_baseline_gives_no_ratio() {
        let r = rank(&[col("v1", "v5e", None), col("v2", "v5e", Some(1e-3))]);
        assert!(r[0].entries[0].speedup.is_nan());
        assert_eq!(r[0].unranked, ["v1"]);
        assert_eq!(r[0].line(), "v5e: v2 (1.00 ms) > not timed: v1");
    }

    #[test]
    fn why_says_what_keeps_a_version_out_of_the_ranking() {
        let mut untimed = col("xla", "v5e", None);
        untimed.untimed = Some("the whole program has 3 instructions: no LLO program in the dumps".into());
        let r = rank(&[untimed.clone()]);
        assert_eq!(
            r[0].why.as_deref(),
            Some("xla is not timed: the whole program has 3 instructions: no LLO program in the dumps")
        );
        let r = rank(&[col("v1", "v5e", Some(1e-3)), untimed]);
        let why = r[0].why.as_deref().unwrap();
        assert!(
            why.starts_with("v1 is fastest")
                && why.ends_with(
                    "; xla is not timed: the whole program has 3 \
             instructions: no LLO program in the dumps"
                ),
            "{why}"
        );
    }

    #[test]
    fn why_names_the_dominant_term_the_difference_and_the_overhead_share() {
        let split = |compute: f64, transfer: f64| TimeSplit {
            overhead: 6e-6,
            compute,
            transfer,
            latency: transfer * 0.8,
            predicted: 6e-6 + compute.max(transfer),
            ..TimeSplit::default()
        };
        let w = why("v3", split(4e-6, 12e-6), Some(("v1", split(4e-6, 15e-6)))).unwrap();
        assert_eq!(
            w,
            "v3 is fastest, DMA latency bound (DMA transfers 12.0 µs); against v1 its DMA transfers take 3.00 µs \
             less; fixed overhead is 6.00 µs, 33% of its 18.0 µs"
        );
        let alone = why("v1", split(9e-6, 1e-6), None).unwrap();
        assert!(alone.starts_with("v1 is fastest, compute bound (compute 9.00 µs); fixed overhead"), "{alone}");
    }
}

//! Inline SVG charts for the HTML report (maud escapes every interpolated string): the predicted time per version
//! split into its terms — overhead, exposed copies, compute and memory overlapping, XLA's ops around the kernels —
//! and the timeline of one steady-state loop iteration.

use super::{seconds, Column};
use crate::perf::timeline::{Mark, Timeline};
use maud::{html, Markup};

const WIDTH: f64 = 720.0;
const LABEL: f64 = 150.0;
const BAR: f64 = 22.0;

fn px(v: f64) -> String {
    format!("{v:.1}")
}

/// Horizontal bars, one per column with a predicted time, its terms in the order the model adds them: the launch
/// overhead, the copies nothing overlaps (`exposed`), compute and memory — which overlap in time, the slower one
/// setting it, so they are two half-height bars side by side —, then what XLA runs around the kernels in a whole
/// program (its fusions and copies, the waits for its async copies, the top-level program). Exposed copies and XLA
/// ops are drawn, and named in the legend, only where some version has them.
pub fn time_bars(columns: &[&Column]) -> Markup {
    let timed: Vec<(&Column, super::TimeSplit)> = columns.iter().filter_map(|c| c.time.map(|t| (*c, t))).collect();
    let max = timed.iter().map(|(_, t)| t.total()).fold(0.0_f64, f64::max);
    let scale = if max > 0.0 { (WIDTH - LABEL - 140.0) / max } else { 0.0 };
    let height = 30.0 + timed.len() as f64 * (BAR + 8.0);
    let title =
        "Predicted time per version: overhead, exposed copies, then compute and memory overlapping, then XLA ops";
    let kinds: Vec<&str> = TERMS
        .iter()
        .copied()
        .filter(|k| match *k {
            "exposed" => timed.iter().any(|(_, t)| t.exposed > 0.0),
            "xla" => timed.iter().any(|(_, t)| t.xla > 0.0),
            _ => true,
        })
        .collect();
    html! {
        svg.chart.time-bars width=(px(WIDTH)) height=(px(height)) viewBox=(format!("0 0 {WIDTH} {height:.1}")) role="img" aria-label=(title) {
            title { (title) }
            (legend(&kinds))
            @for (i, (c, t)) in timed.iter().enumerate() {
                @let y = 26.0 + i as f64 * (BAR + 8.0);
                @let x0 = LABEL + t.overhead * scale;
                @let x1 = x0 + t.exposed * scale;
                @let x2 = x1 + t.compute.max(t.memory) * scale;
                g {
                    text x=(px(LABEL - 6.0)) y=(px(y + BAR * 0.7)) text-anchor="end" { (c.version) }
                    (segment("overhead", LABEL, y, t.overhead * scale, BAR, t.overhead))
                    @if t.exposed > 0.0 {
                        (segment("exposed", x0, y, t.exposed * scale, BAR, t.exposed))
                    }
                    (segment("compute", x1, y, t.compute * scale, BAR / 2.0, t.compute))
                    (segment("memory", x1, y + BAR / 2.0, t.memory * scale, BAR / 2.0, t.memory))
                    @if t.xla > 0.0 {
                        (segment("xla", x2, y, t.xla * scale, BAR, t.xla))
                    }
                    text x=(px(LABEL + t.total() * scale + 6.0)) y=(px(y + BAR * 0.7)) {
                        (seconds(t.total())) " · " (t.bound())
                    }
                }
            }
        }
    }
}

/// The chart's terms, in drawing order, by CSS class (the HTML page colours them).
const TERMS: [&str; 5] = ["overhead", "exposed", "compute", "memory", "xla"];

/// A term as the legend and the tooltips name it.
fn term_name(kind: &str) -> &str {
    match kind {
        "exposed" => "exposed copies",
        "xla" => "XLA ops",
        k => k,
    }
}

fn segment(kind: &str, x: f64, y: f64, w: f64, h: f64, secs: f64) -> Markup {
    html! {
        rect class=(kind) x=(px(x)) y=(px(y)) width=(px(w.max(0.5))) height=(px(h)) {
            title { (term_name(kind)) ": " (seconds(secs)) }
        }
    }
}

fn legend(kinds: &[&str]) -> Markup {
    html! {
        g.legend {
            @for (i, kind) in kinds.iter().enumerate() {
                @let x = LABEL + i as f64 * 110.0;
                rect class=(kind) x=(px(x)) y="4" width="12" height="12" {}
                text x=(px(x + 16.0)) y="14" { (term_name(kind)) }
            }
        }
    }
}

/// One loop iteration: a lane per kind of work, a column per bundle; hovering a mark lists its ops. `longest` is
/// the bundle count of the longest iteration drawn beside it: every timeline takes its bundle width from it, so
/// widths compare.
pub fn timeline(t: &Timeline, longest: u64) -> Markup {
    let lane_h = 18.0;
    let label = 100.0;
    let cell = bundle_width(longest.max(t.bundles), label);
    let width = label + cell * t.bundles as f64 + 10.0;
    let height = 34.0 + lane_h * t.lanes.len() as f64;
    let tick = tick_step(cell);
    let aria = format!("{}: {} bundles per iteration", t.region, t.bundles);
    html! {
        svg.chart.timeline width=(px(width)) height=(px(height)) viewBox=(format!("0 0 {width:.1} {height:.1}")) role="img" aria-label=(aria) {
            title { (aria) }
            @for (a, b) in &t.inner_loops {
                rect.inner-loop x=(px(label + *a as f64 * cell)) y="0" width=(px((b + 1 - a) as f64 * cell)) height=(px(height - 28.0)) {
                    title { "inner loop, drawn once: bundles " (a) "–" (b) }
                }
            }
            @for (i, lane) in t.lanes.iter().enumerate() {
                @let y = i as f64 * lane_h;
                text x=(px(label - 6.0)) y=(px(y + lane_h * 0.7)) text-anchor="end" { (lane.lane.label()) }
                @for run in runs(&lane.marks) {
                    rect class=(format!("lane-{}", lane_class(lane.lane))) x=(px(label + run[0].offset as f64 * cell)) y=(px(y + 2.0)) width=(px((cell * run.len() as f64).max(1.0))) height=(px(lane_h - 4.0)) {
                        title { (run_title(t.start, run)) }
                    }
                }
            }
            @for k in (0..t.bundles).step_by(tick as usize) {
                text.tick x=(px(label + k as f64 * cell)) y=(px(height - 16.0)) { (k) }
            }
            text.tick x=(px(label)) y=(px(height - 3.0)) { "bundle (cycle) of the iteration →" }
        }
    }
}

/// The width of one bundle when the longest iteration drawn takes the chart's width (at most 14 px, so a short
/// loop is not blown up; marks stay at least a pixel wide).
fn bundle_width(longest: u64, label: f64) -> f64 {
    ((WIDTH - label - 10.0) / longest.max(1) as f64).min(14.0)
}

/// Marks of consecutive bundles together: one rectangle each, so a long loop stays a small page.
fn runs(marks: &[Mark]) -> Vec<&[Mark]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=marks.len() {
        if i == marks.len() || marks[i].offset != marks[i - 1].offset + 1 {
            if start < i {
                out.push(&marks[start..i]);
            }
            start = i;
        }
    }
    out
}

/// `+5 (0x5e): vmatmul…` for one bundle; `+5–7 (0x5e–0x60): 4 ops: a, b, c, d` for a run (at most 12 named).
fn run_title(base: u64, run: &[Mark]) -> String {
    let (a, b) = (run[0].offset, run[run.len() - 1].offset);
    let ops: Vec<&str> = run.iter().flat_map(|m| m.ops.iter().map(String::as_str)).collect();
    let mut names = ops.iter().take(12).copied().collect::<Vec<_>>().join(", ");
    if ops.len() > 12 {
        names.push_str(", …");
    }
    if a == b {
        format!("+{a} (0x{:x}): {names}", base + a)
    } else {
        format!("+{a}–{b} (0x{:x}–0x{:x}): {} ops: {names}", base + a, base + b, ops.len())
    }
}

fn lane_class(l: crate::perf::timeline::Lane) -> String {
    serde_json::to_value(l).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// Tick labels at a round step at least 40 px apart (a label of four digits fits), whatever the scale.
fn tick_step(cell: f64) -> u64 {
    [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]
        .into_iter()
        .find(|&s| s as f64 * cell >= 40.0)
        .unwrap_or(10_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::sample;

    #[test]
    fn bars_only_for_timed_columns_and_scaled_to_the_slowest() {
        let c = sample::comparison();
        let cols: Vec<&Column> = c.columns.iter().collect();
        let svg = time_bars(&cols).into_string();
        // three timed versions × three segments, plus the legend's three swatches
        assert_eq!(svg.matches("<rect").count(), 12, "{svg}");
        assert!(!svg.contains("bug<script>") && !svg.contains("bug&lt;script"), "untimed column drawn: {svg}");
        assert!(svg.contains("9.00 µs · compute"), "{svg}");
    }

    #[test]
    fn exposed_copies_and_xla_ops_are_drawn_in_turn_after_the_overlap() {
        let c = sample::comparison();
        let mut col = c.columns[0].clone();
        // 1 µs overhead, 2 µs exposed, compute 4 µs beside memory 3 µs, 5 µs of XLA ops: 12 µs
        col.time = Some(super::super::TimeSplit {
            exposed: 2e-6,
            xla: 5e-6,
            predicted: 12e-6,
            ..super::super::TimeSplit::of(1e-6, 4e-6, 3e-6)
        });
        let svg = time_bars(&[&col]).into_string();
        assert!(svg.contains("exposed copies: 2.00 µs") && svg.contains("XLA ops: 5.00 µs"), "{svg}");
        assert!(svg.contains(">XLA ops</text>") && svg.contains(">exposed copies</text>"), "legend: {svg}");
        // five segments and five legend swatches
        assert_eq!(svg.matches("<rect").count(), 10, "{svg}");
        let x = |class: &str| -> f64 {
            let at = svg.rfind(&format!("<rect class=\"{class}\" x=\"")).expect(class) + class.len() + 18;
            svg[at..].split('"').next().unwrap().parse().unwrap()
        };
        let scale = (WIDTH - LABEL - 140.0) / 12e-6;
        assert!((x("exposed") - (LABEL + 1e-6 * scale)).abs() < 0.1);
        assert!((x("compute") - (LABEL + 3e-6 * scale)).abs() < 0.1);
        assert!((x("xla") - (LABEL + 7e-6 * scale)).abs() < 0.1, "after the longer of compute and memory");
    }

    #[test]
    fn timeline_marks_and_escaped_tooltips() {
        let svg = timeline(&sample::timeline(), 16).into_string();
        // the two MXU marks sit in consecutive bundles: one rectangle
        assert_eq!(svg.matches("class=\"lane-mxu\"").count(), 1, "{svg}");
        assert!(svg.contains("+5–6 (0x5e–0x5f): 2 ops: vmatmul.mubr.f8e4m3fn.mxu0, vmatres&lt;&amp;&gt;"), "{svg}");
        assert!(svg.contains("+1 (0x5a): dma.hbm_to_vmem"), "{svg}");
        let m = |offset| Mark { offset, ops: vec!["x".into()] };
        let marks = [m(1), m(2), m(4), m(5), m(6), m(9)];
        let lens: Vec<usize> = runs(&marks).iter().map(|r| r.len()).collect();
        assert_eq!(lens, [2, 3, 1]);
        assert!(runs(&[]).is_empty());
        assert_eq!(tick_step(14.0), 5);
        assert_eq!(tick_step(610.0 / 1857.0), 200);
        // one scale: beside a 64-bundle loop, a 16-bundle one is a quarter as wide
        let width = |longest| {
            let svg = timeline(&sample::timeline(), longest).into_string();
            let w = svg.split("width=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
            w.parse::<f64>().unwrap() - 110.0
        };
        assert!((width(64) - 16.0 * 610.0 / 64.0).abs() < 0.1, "{}", width(64));
        assert!((width(16) - 16.0 * 14.0).abs() < 0.1, "{}", width(16));
    }
}

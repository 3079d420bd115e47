//! The comparison as one self-contained HTML page: per target the table, a bar chart of predicted time and the
//! ranking, then per kernel the timeline of one steady-state loop iteration of each version. No script and nothing
//! fetched (styles inline, charts inline SVG), so it opens offline and as a CI artifact; maud escapes every string
//! that comes from the input.

use super::{svg, Column, Comparison, Row, Tone};
use maud::{html, Markup, PreEscaped, DOCTYPE};

const STYLE: &str = r#"
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 2em; } h3 { font-size: 1.05em; }
table.compare { border-collapse: collapse; font-variant-numeric: tabular-nums; }
table.compare th, table.compare td { padding: 2px 8px; border-bottom: 1px solid #e4e4e4; text-align: right; white-space: nowrap; }
table.compare th.group, table.compare td.group, table.compare td.label { text-align: left; color: #555; }
table.compare tr.heading th { text-align: left; background: #f2f2f2; }
td.good { color: #17692a; } td.warn { background: #fff4d6; } td.bad { background: #fde0e0; }
svg.chart { display: block; margin: 0.5em 0 1em; font-size: 11px; }
svg .overhead { fill: #9e9e9e; } svg .compute { fill: #3b6fd4; } svg .memory { fill: #e08a1e; }
svg .inner-loop { fill: #f3f3f3; } svg .tick { fill: #777; }
svg .lane-dma-issue { fill: #e08a1e; } svg .lane-dma-wait { fill: #c62828; } svg .lane-sync { fill: #8e24aa; }
svg .lane-mxu { fill: #3b6fd4; } svg .lane-vector-load { fill: #2e7d32; } svg .lane-vector-store { fill: #66bb6a; }
svg .lane-vector-alu { fill: #00838f; } svg .lane-scalar { fill: #bdbdbd; }
div.scroll { overflow-x: auto; max-width: 100%; }
div.timelines { display: flex; flex-wrap: wrap; gap: 0 2em; }
figure { margin: 0 0 1em; } figcaption { color: #555; }
.ranking { font-weight: 600; } .notes { color: #555; }
"#;

pub fn page(c: &Comparison) -> String {
    let tail = c.compilation_rows();
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "hlolint compare" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { "hlolint compare" }
                @for (target, cols) in c.by_target() {
                    (target_section(c, target, &cols, &tail))
                }
                @if !c.notes.is_empty() {
                    ul.notes { @for n in &c.notes { li { (n) } } }
                }
            }
        }
    };
    markup.into_string()
}

fn target_section(c: &Comparison, target: &str, cols: &[usize], tail: &[Row]) -> Markup {
    let columns: Vec<&Column> = cols.iter().map(|&i| &c.columns[i]).collect();
    html! {
        section.target {
            h2 { (target) }
            div.scroll { table.compare {
                thead { tr {
                    th.group { (target) } th {}
                    @for col in &columns { th title=(col.dir) { (col.version) } }
                } }
                tbody {
                    @for k in &c.kernels { (rows(&k.title, &k.rows, cols)) }
                    (rows("compilation", tail, cols))
                }
            } }
            h3 { "Predicted time" }
            (svg::time_bars(&columns))
            @for r in c.rankings.iter().filter(|r| r.target == target) {
                p.ranking { (r.line()) }
            }
            @for k in &c.kernels {
                (timelines(&k.title, &k.timelines, &columns, cols))
            }
        }
    }
}

fn rows(heading: &str, rows: &[Row], cols: &[usize]) -> Markup {
    html! {
        tr.heading { th colspan=(cols.len() + 2) { (heading) } }
        @for (i, r) in rows.iter().enumerate() {
            tr class=[r.detail.then_some("detail")] {
                td.group { @if i == 0 || rows[i - 1].group != r.group { (r.group) } }
                td.label { (r.label) }
                @for &ci in cols {
                    @if let Some(cell) = r.cells.get(ci) {
                        td class=(tone_class(cell.tone)) title=[cell.note.as_deref()] { (cell.text) }
                    } @else { td {} }
                }
            }
        }
    }
}

fn tone_class(t: Tone) -> &'static str {
    match t {
        Tone::Plain => "",
        Tone::Good => "good",
        Tone::Warn => "warn",
        Tone::Bad => "bad",
    }
}

fn timelines(
    title: &str,
    of: &[Option<crate::perf::timeline::Timeline>],
    columns: &[&Column],
    cols: &[usize],
) -> Markup {
    html! {
        h3 { "Steady-state loop iteration: " (title) }
        div.timelines { @for (col, &i) in columns.iter().zip(cols) {
            figure {
                @match of.get(i).and_then(Option::as_ref) {
                    Some(t) => {
                        figcaption {
                            (col.version) ": " (t.region) ", loop level " (t.level) ", " (t.bundles)
                            " bundles per iteration, " (t.mxu_ops) " MXU ops"
                        }
                        (svg::timeline(t))
                    }
                    None => figcaption { (col.version) ": no loop with MXU work in the LLO bundles" },
                }
            }
        } }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::sample;

    #[test]
    fn page_is_self_contained_and_escaped() {
        let out = page(&sample::comparison());
        assert!(out.starts_with("<!DOCTYPE html>"));
        assert!(!out.contains("<script"), "input reached the page unescaped");
        assert!(out.contains("bug&lt;script&gt;"));
        assert!(out.contains("k|&quot;a,b&quot;\n&lt;b&gt;&amp;amp;&lt;/b&gt;"), "{out}");
        for external in ["src=", "href=", "@import", "url("] {
            assert!(!out.contains(external), "{external} in a self-contained page");
        }
        assert_eq!(out.matches("<table class=\"compare\">").count(), 2);
        assert_eq!(out.matches("class=\"chart time-bars\"").count(), 2);
        // the sample has timelines for v1 on both targets
        assert_eq!(out.matches("class=\"chart timeline\"").count(), 2);
        assert!(out.contains("no loop with MXU work"));
        assert!(out.contains("<td class=\"bad\">2 err</td>"), "{out}");
    }
}

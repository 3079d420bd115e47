//! The comparison as one self-contained HTML page: per target the table, a bar chart of predicted time and the
//! ranking, then per kernel the timeline of one steady-state loop iteration of each version. No script and nothing
//! fetched (styles inline, charts inline SVG), so it opens offline and as a CI artifact; maud escapes every string
//! that comes from the input.

use super::kernels::LoopName;
use super::{facts, svg, Column, Comparison, KernelSlot, Row, Tone};
use maud::{html, Markup, PreEscaped, DOCTYPE};

const STYLE: &str = r#"
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 2em; } h3 { font-size: 1.05em; }
table.compare { border-collapse: collapse; font-variant-numeric: tabular-nums; width: 100%; table-layout: fixed; }
table.compare col.group { width: 5.5em; } table.compare col.label { width: 8em; }
table.compare th, table.compare td { padding: 2px 6px; border-bottom: 1px solid #e4e4e4; text-align: right; overflow-wrap: anywhere; vertical-align: top; }
table.compare th.group, table.compare td.group, table.compare td.label { text-align: left; color: #555; }
table.compare thead th { vertical-align: bottom; }
table.compare tr.heading th { text-align: left; background: #f2f2f2; }
table.compare tr.verdict td { font-weight: 600; }
td.good { color: #17692a; } td.warn { background: #fff4d6; } td.bad { background: #fde0e0; }
td .loop { display: block; } td .aside, figcaption .aside { color: #888; font-weight: normal; }
svg.chart { display: block; margin: 0.5em 0 1em; font-size: 11px; }
svg .overhead { fill: #9e9e9e; } svg .compute { fill: #3b6fd4; } svg .memory { fill: #e08a1e; }
svg .exposed { fill: #c9a26b; } svg .xla { fill: #7b5ea7; }
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

/// A target's table fits the page's width whatever the number of versions (fixed layout: the version columns
/// share what the two label columns leave, long names and texts wrap), and its verdicts come first: which version
/// is clean is what a reader looks for before the numbers.
fn target_section(c: &Comparison, target: &str, cols: &[usize], tail: &[Row]) -> Markup {
    let columns: Vec<&Column> = cols.iter().map(|&i| &c.columns[i]).collect();
    let (verdicts, totals): (Vec<Row>, Vec<Row>) = tail.iter().cloned().partition(|r| r.group == "rules");
    html! {
        section.target {
            h2 { (target) }
            div.scroll { table.compare {
                colgroup { col.group; col.label; @for _ in cols { col.version; } }
                thead { tr {
                    th.group { (target) } th {}
                    @for col in &columns { th.version title=(col.dir) { (breakable(&col.version)) } }
                } }
                tbody {
                    (rows("verdict", &verdicts, cols, None))
                    @for k in &c.kernels { (rows(&k.title, &k.rows, cols, Some(&k.loops))) }
                    @if !totals.is_empty() { (rows("compilation", &totals, cols, None)) }
                }
            } }
            h3 { "Predicted time" }
            (svg::time_bars(&columns))
            @for r in c.rankings.iter().filter(|r| r.target == target) {
                p.ranking { (r.line()) }
            }
            @for k in &c.kernels {
                (timelines(&k.title, k, &columns, cols))
            }
        }
    }
}

/// A name that may wrap after `_`, `-`, `.`, `@`, `·` (`bug_unwaited_dma`, `f8e4m3fn·f8e4m3fn→f32`) and before
/// `→`, rather than inside a word; a word longer than its column still breaks anywhere (`overflow-wrap`).
fn breakable(name: &str) -> Markup {
    let mut parts: Vec<&str> = Vec::new();
    let mut start = 0;
    for (i, ch) in name.char_indices() {
        let digit_next = name[i + ch.len_utf8()..].starts_with(|c: char| c.is_ascii_digit());
        let at = match ch {
            // not inside a number (`3.00 MiB`)
            '.' if digit_next => continue,
            '_' | '-' | '.' | '@' | '·' => i + ch.len_utf8(),
            '→' => i,
            _ => continue,
        };
        if at > start {
            parts.push(&name[start..at]);
            start = at;
        }
    }
    if start < name.len() || parts.is_empty() {
        parts.push(&name[start..]);
    }
    html! { @for (i, p) in parts.iter().enumerate() { @if i > 0 { wbr; } (p) } }
}

fn rows(heading: &str, rows: &[Row], cols: &[usize], loops: Option<&[Vec<LoopName>]>) -> Markup {
    html! {
        tr.heading { th colspan=(cols.len() + 2) { (heading) } }
        @for (i, r) in rows.iter().enumerate() {
            @let named = loops.filter(|_| r.label == facts::LOOP_TRIPS);
            tr class=[r.detail.then_some("detail").or((r.group == "rules").then_some("verdict"))] {
                td.group { @if i == 0 || rows[i - 1].group != r.group { (r.group) } }
                td.label {
                    @if named.is_some() { "loops: trips" } @else { (r.label) }
                }
                @for &ci in cols {
                    @match (r.cells.get(ci), named.and_then(|l| l.get(ci)).filter(|l| !l.is_empty())) {
                        (Some(cell), Some(names)) => { td class=(tone_class(cell.tone)) { (loop_cell(names)) } }
                        (Some(cell), None) => {
                            td class=(tone_class(cell.tone)) title=[cell.note.as_deref()] { (breakable(&cell.text)) }
                        }
                        (None, _) => { td {} }
                    }
                }
            }
        }
    }
}

/// The loops of one kernel in one version: `grid of kernels.py:98: 18 *` (what the count is made of in the
/// tooltip), `loop at kernels.py:163: 4`; then the LLO loops the performance model did not match with the grid or
/// a loop of the kernel (libtpu's copies, unrolled or split loops), together, their trip counts grouped.
fn loop_cell(names: &[LoopName]) -> Markup {
    let other: Vec<&LoopName> = names.iter().filter(|l| l.name.is_none()).collect();
    html! {
        @for l in names.iter().filter(|l| l.name.is_some()) {
            @let tip = [Some(format!("LLO {} (loop level {})", l.region, l.level)), l.python.clone(), l.note.clone()]
                .into_iter().flatten().collect::<Vec<_>>().join("; ");
            span class="loop" title=(tip) {
                (l.name.as_deref().unwrap_or_default()) ": " (l.trips) @if l.note.is_some() { "\u{a0}*" }
            }
        }
        @if !other.is_empty() {
            @let tip = format!(
                "LLO loops not matched with the grid or a loop of the kernel: {}",
                other.iter().map(|l| format!("{} ×{}", l.region, l.trips)).collect::<Vec<_>>().join(", ")
            );
            span class="loop aside" title=(tip) {
                (other.len()) " other LLO loop(s), trips " (grouped(&other))
            }
        }
    }
}

/// Trip counts in order of first appearance: `1, 4` for a few, `1 ×32, 4 ×32, ? ×2` when they repeat.
fn grouped(loops: &[&LoopName]) -> String {
    if loops.len() <= 4 {
        return loops.iter().map(|l| l.trips.as_str()).collect::<Vec<_>>().join(", ");
    }
    let mut groups: Vec<(&str, usize)> = Vec::new();
    for l in loops {
        match groups.iter_mut().find(|(t, _)| *t == l.trips) {
            Some((_, n)) => *n += 1,
            None => groups.push((&l.trips, 1)),
        }
    }
    groups.iter().map(|(t, n)| if *n == 1 { t.to_string() } else { format!("{t} ×{n}") }).collect::<Vec<_>>().join(", ")
}

fn tone_class(t: Tone) -> &'static str {
    match t {
        Tone::Plain => "",
        Tone::Good => "good",
        Tone::Warn => "warn",
        Tone::Bad => "bad",
    }
}

/// The steady-state iteration of each version, all on one scale: a bundle is as wide in every version's
/// timeline, so a loop twice as long is drawn twice as wide.
fn timelines(title: &str, k: &KernelSlot, columns: &[&Column], cols: &[usize]) -> Markup {
    let of = &k.timelines;
    let longest = cols.iter().filter_map(|&i| of.get(i).and_then(Option::as_ref)).map(|t| t.bundles).max().unwrap_or(1);
    html! {
        h3 { "One loop iteration in the steady state: " (title) }
        p.notes {
            "Bundles (one per cycle) of one iteration of the innermost loop holding matmuls, all versions on one \
             scale; a lane per kind of work, hover a mark for its ops. Shaded: an inner loop, drawn once."
        }
        div.timelines { @for (col, &i) in columns.iter().zip(cols) {
            figure {
                @match of.get(i).and_then(Option::as_ref) {
                    Some(t) => {
                        @let name = k.loops.get(i).and_then(|ls| ls.iter().find(|l| l.region == t.region));
                        figcaption {
                            (col.version) ": "
                            @match name.and_then(|l| l.name.as_deref()) {
                                Some(n) => { "one iteration of the " (n) }
                                None => { "one iteration of an LLO loop not matched with the kernel's source" }
                            }
                            " · " (t.bundles) " bundles · " (t.mxu_ops) " MXU ops "
                            span.aside { "(LLO " (t.region) ", loop level " (t.level) ")" }
                        }
                        (svg::timeline(t, longest))
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
    use crate::compare::{sample, Cell};

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

    #[test]
    fn verdicts_first_columns_fit_and_loops_by_their_names() {
        let mut c = sample::comparison();
        // the performance model's row of LLO trip counts, which the page shows with the loops' names
        c.kernels[0].rows.push(Row {
            group: "bundles".into(),
            label: facts::LOOP_TRIPS.into(),
            detail: true,
            cells: vec![Cell::text("18 4 1"), Cell::text("no loop"), Cell::text("18 4"), Cell::absent()],
        });
        let out = page(&c);
        // the verdict rows come before the first kernel's
        let verdict = out.find(">verdict</th>").expect("a verdict heading");
        assert!(verdict < out.find(">kernel 1</th>").unwrap(), "{out}");
        assert!(out.contains("<tr class=\"verdict\"><td class=\"group\">rules</td><td class=\"label\">findings</td>"));
        // one column per version in a fixed layout
        assert_eq!(out.matches("<col class=\"version\">").count(), 4, "{out}");
        assert_eq!(breakable("bug_unwaited_dma").into_string(), "bug_<wbr>unwaited_<wbr>dma");
        assert_eq!(breakable("f8·f8→f32_").into_string(), "f8·<wbr>f8<wbr>→f32_");
        assert_eq!(breakable("3.00 MiB").into_string(), "3.00 MiB");
        // the loop trips row names the loops, unmatched ones together, the LLO region in the tooltip only
        assert!(out.contains("<td class=\"label\">loops: trips</td>"), "{out}");
        assert!(out.contains("grid of &lt;k&gt;.py:98: 18\u{a0}*</span>"), "{out}");
        assert!(out.contains("title=\"LLO region170 (loop level 1); /src/&lt;k&gt;.py:98; 16 grid steps + 2 pipeline"));
        assert!(out.contains("loop at &lt;k&gt;.py:163: 4</span>"), "{out}");
        assert!(out.contains("1 other LLO loop(s), trips 1</span>"), "{out}");
        let l = |t: &str| LoopName { trips: t.into(), ..LoopName::default() };
        let many = [l("1"), l("4"), l("1"), l("4"), l("?")];
        assert_eq!(grouped(&many.iter().collect::<Vec<_>>()), "1 ×2, 4 ×2, ?");
        assert_eq!(grouped(&many[..3].iter().collect::<Vec<_>>()), "1, 4, 1");
        // a column without names keeps the row's text
        assert!(out.contains("<td class=\"\">no loop</td>"), "{out}");
        // the timeline's caption: the loop's name first, the LLO region aside
        assert!(out.contains("v1: one iteration of the loop at &lt;k&gt;.py:163 · 16 bundles · 2 MXU ops <span class=\"aside\">(LLO region95, loop level 2)</span>"), "{out}");
        assert!(out.contains("v1: one iteration of an LLO loop not matched with the kernel's source"), "{out}");
    }
}

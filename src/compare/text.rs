//! The comparison as text: a terminal table per target (versions as columns, so sixteen compilations of two
//! targets fit one screen) and the same tables in GitHub Markdown for a pull-request comment.

use super::{Column, Comparison, Row, Tone};
use comfy_table::{presets, CellAlignment, ContentArrangement, Table};

/// Terminal tables, one per target, then the rankings and the notes. With a `width` (the terminal's), a target's
/// versions that do not fit side by side are split over several tables, each fitting, and the report says so.
pub fn terminal(c: &Comparison, width: Option<usize>) -> String {
    let mut out = String::new();
    let tail = c.compilation_rows();
    let hidden = c.kernels.iter().flat_map(|k| &k.rows).chain(&tail).filter(|r| r.detail).count();
    let mut split = Vec::new();
    for (target, cols) in c.by_target() {
        let render = |part: &[usize]| table(c, target, part, &tail);
        let whole = render(&cols);
        let fits = |t: &str| width.is_none_or(|w| t.lines().all(|l| l.chars().count() <= w));
        if fits(&whole) || cols.len() < 2 {
            out.push_str(&whole);
            continue;
        }
        // the most versions per table for which every table fits (one per table when even that does not)
        let per = (1..cols.len()).rev().find(|&n| cols.chunks(n).all(|part| fits(&render(part)))).unwrap_or(1);
        for part in cols.chunks(per) {
            out.push_str(&render(part));
        }
        split.push(format!("{target}: {} versions in tables of {per}", cols.len()));
    }
    let mut lines = Vec::new();
    for r in &c.rankings {
        lines.push(format!("rank {}", one_line(&r.short_line())));
        if let Some(w) = &r.why {
            lines.push(format!("why {}: {}", r.target, one_line(w)));
        }
    }
    for n in &c.notes {
        lines.push(format!("note: {}", one_line(n)));
    }
    if !split.is_empty() {
        lines.push(format!(
            "note: split to fit {} columns ({}); a wider terminal, or --format markdown or html, shows them side by \
             side",
            width.unwrap_or_default(),
            split.join("; ")
        ));
    }
    if hidden > 0 {
        lines.push(format!("({hidden} more rows with --format markdown, html, json or csv)"));
    }
    for l in lines {
        out.push_str(&wrap(&l, width));
    }
    out
}

/// `line` and a newline, its words wrapped to `width` with the next lines indented by two spaces (a word longer
/// than the width keeps its own line).
fn wrap(line: &str, width: Option<usize>) -> String {
    let Some(w) = width else { return format!("{line}\n") };
    let mut out = String::new();
    let mut cur = String::new();
    for word in line.split(' ') {
        let len = cur.chars().count();
        if len > 2 && len + 1 + word.chars().count() > w {
            out.push_str(cur.trim_end());
            out.push('\n');
            cur = "  ".to_string();
        } else if !cur.is_empty() && !cur.ends_with("  ") {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    out.push_str(cur.trim_end());
    out.push('\n');
    out
}

/// One target's table over the versions `cols`.
fn table(c: &Comparison, target: &str, cols: &[usize], tail: &[Row]) -> String {
    let mut t = Table::new();
    t.load_style(presets::UTF8_BORDERS_ONLY).set_content_arrangement(ContentArrangement::Disabled);
    let mut header = vec![target.to_string(), String::new()];
    header.extend(cols.iter().map(|&i| two_lines(&one_line(&c.columns[i].version))));
    t.set_header(header);
    for k in &c.kernels {
        push_rows(&mut t, &k.title, &k.rows, cols, &c.columns);
    }
    push_rows(&mut t, "compilation", tail, cols, &c.columns);
    for col in t.column_iter_mut().skip(2) {
        col.set_cell_alignment(CellAlignment::Right);
    }
    t.to_string() + "\n"
}

/// A block of rows under a heading row; the group is printed on its first row only.
fn push_rows(t: &mut Table, heading: &str, rows: &[Row], cols: &[usize], columns: &[Column]) {
    let mut head = vec![format!("{heading}:"), String::new()];
    head.extend(cols.iter().map(|_| String::new()));
    t.add_row(head);
    let mut last = "";
    for r in rows.iter().filter(|r| !r.detail && !repeats_versions(r, cols, columns)) {
        let group = if r.group == last { String::new() } else { format!(" {}", r.group) };
        last = &r.group;
        let mut line = vec![one_line(&group), one_line(&r.label)];
        let texts: Vec<String> =
            cols.iter().map(|&i| r.cells.get(i).map(|c| one_line(&c.text)).unwrap_or_default()).collect();
        let cut = common_prefix(&texts);
        for (&i, text) in cols.iter().zip(&texts) {
            let tone = r.cells.get(i).map(|c| c.tone).unwrap_or_default();
            let short = if cut > 0 && text.len() > cut { format!("…{}", &text[cut..]) } else { text.clone() };
            line.push(marked(&wrap_words(&two_lines(&short)), tone));
        }
        t.add_row(line);
    }
}

/// A kernel name row whose every name ends with its column's version (`fp8_mm_v2` under `v2`) says nothing the
/// header does not: the terminal leaves it out.
fn repeats_versions(r: &Row, cols: &[usize], columns: &[Column]) -> bool {
    r.group == "kernel"
        && r.label == "name"
        && cols.iter().all(|&i| r.cells.get(i).is_some_and(|c| c.text.ends_with(&columns[i].version)))
}

/// The length of the prefix every distinct text of a row shares up to a `_`, `.` or `/` (`fp8_mm_` of
/// `fp8_mm_v1.1`, `fp8_mm_v2.1`), when at least 4 bytes long: the terminal elides it, the other formats keep it.
fn common_prefix(texts: &[String]) -> usize {
    let present: Vec<&String> = texts.iter().filter(|t| t.as_str() != "—" && !t.is_empty()).collect();
    let Some(first) = present.first() else { return 0 };
    if present.iter().all(|t| t == first) {
        return 0;
    }
    let mut n = first.len();
    for t in &present[1..] {
        n = n.min(first.bytes().zip(t.bytes()).take_while(|(a, b)| a == b).count());
    }
    let cut = first[..n].rfind(['_', '.', '/']).map(|i| i + 1).unwrap_or(0);
    if cut >= 4 && present.iter().all(|t| t.len() > cut) {
        cut
    } else {
        0
    }
}

/// A long word on two lines at the `_` nearest its middle (`bug_unwaited_dma` → `bug_` / `unwaited_dma`).
fn two_lines(s: &str) -> String {
    if s.chars().count() <= 12 || s.contains(' ') {
        return s.to_string();
    }
    let mid = s.len() / 2;
    match s.match_indices('_').map(|(i, _)| i).min_by_key(|&i| i.abs_diff(mid)) {
        Some(i) => format!("{}\n{}", &s[..=i], &s[i + 1..]),
        None => s.to_string(),
    }
}

/// Words of a long cell two to a line (`MO010 MO021 XL001` on two lines): keeps columns narrow.
fn wrap_words(s: &str) -> String {
    let words: Vec<&str> = s.split(' ').collect();
    if s.chars().count() <= 14 || words.len() < 3 {
        return s.to_string();
    }
    words.chunks(2).map(|c| c.join(" ")).collect::<Vec<_>>().join("\n")
}

/// A cell's text on one line, with a mark for bad news (`!` a warning, `✗` an error) so it reads without color.
fn marked(text: &str, tone: Tone) -> String {
    let t = text;
    match tone {
        Tone::Warn => format!("{t} !"),
        Tone::Bad => format!("{t} ✗"),
        _ => t.to_string(),
    }
}

/// Control characters (newlines, escapes from a hostile kernel name) would break the table or drive the terminal.
fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// GitHub Markdown: a table per target, then the rankings and notes.
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::from("## hlolint compare\n\n");
    let tail = c.compilation_rows();
    for (target, cols) in c.by_target() {
        out.push_str(&format!("### {}\n\n| | |", md(target)));
        for &i in &cols {
            out.push_str(&format!(" {} |", md(&c.columns[i].version)));
        }
        out.push_str("\n|---|---|");
        out.push_str(&"--:|".repeat(cols.len()));
        out.push('\n');
        for k in &c.kernels {
            md_rows(&mut out, &k.title, &k.rows, &cols);
        }
        md_rows(&mut out, "compilation", &tail, &cols);
        out.push('\n');
    }
    if !c.rankings.is_empty() {
        out.push_str("**Ranking** (predicted time, speedup over the target's first version)\n\n");
        for r in &c.rankings {
            out.push_str(&format!("- {}\n", md(&r.line())));
            if let Some(w) = &r.why {
                out.push_str(&format!("  - why: {}\n", md(w)));
            }
        }
        out.push('\n');
    }
    for n in &c.notes {
        out.push_str(&format!("_{}_\n", md(n)));
    }
    out
}

fn md_rows(out: &mut String, heading: &str, rows: &[Row], cols: &[usize]) {
    out.push_str(&format!("| **{}** | |{}\n", md(heading), " |".repeat(cols.len())));
    let mut last = "";
    for r in rows {
        let group = if r.group == last { String::new() } else { md(&r.group) };
        last = &r.group;
        out.push_str(&format!("| {group} | {} |", md(&r.label)));
        for &i in cols {
            let cell = r.cells.get(i).map(|c| marked(&c.text, c.tone)).unwrap_or_default();
            out.push_str(&format!(" {} |", md(&one_line(&cell))));
        }
        out.push('\n');
    }
}

/// Text safe in a Markdown table cell: no pipe, no HTML, no line break, no emphasis or code span.
fn md(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in one_line(s).chars() {
        match ch {
            '|' => o.push_str("\\|"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '*' | '_' | '`' | '[' | ']' | '\\' => {
                o.push('\\');
                o.push(ch);
            }
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::sample;

    #[test]
    fn notes_wrap_to_the_width() {
        assert_eq!(wrap("note: a b cc dd", Some(9)), "note: a b\n  cc dd\n");
        assert_eq!(wrap("note: a b cc dd", None), "note: a b cc dd\n");
        assert_eq!(wrap("averyveryverylongword x", Some(5)), "averyveryverylongword\n  x\n");
    }

    #[test]
    fn terminal_one_table_per_target() {
        let out = terminal(&sample::comparison(), None);
        let headers: Vec<&str> = out.lines().filter(|l| l.contains("tpu7x") || l.contains("v6e")).collect();
        assert!(headers.iter().any(|l| l.contains("v1") && l.contains("v2") && !l.contains("bug")), "{out}");
        assert!(out.contains("bug<script>"), "{out}");
        // the hostile name stays on one line: every table line has the same width
        let widths: std::collections::BTreeSet<usize> = out
            .lines()
            .take_while(|l| !l.starts_with("rank"))
            .filter(|l| !l.is_empty())
            .map(|l| l.chars().count())
            .collect();
        assert_eq!(widths.len(), 2, "one width per table: {widths:?}\n{out}");
        assert!(out.contains("2 err ✗"), "{out}");
        // v2 has a warning: marked, and the pick is v1
        let pick = "; pick v1 (fastest without errors or warnings; ✗ errors, ! warnings)";
        assert!(out.contains(&format!("rank tpu7x, speedup over v1 (5.00 µs): v2 ! 1.11× > v1{pick}\n")), "{out}");
        assert!(out.contains("rank v6e, speedup over v1 (9.00 µs): v1 > not timed: bug<script>\n"), "{out}");
        // detail rows (FLOPs, the compilation's time split) are counted, not shown (the `why` line below the
        // ranking names the overhead's share)
        let tables = out.lines().take_while(|l| !l.starts_with("rank")).collect::<Vec<_>>().join("\n");
        assert!(!tables.contains("FLOPs") && !tables.contains("overhead"), "{out}");
        assert!(out.contains("why tpu7x: v2 is fastest"), "{out}");
        assert!(out.contains("(4 more rows with"), "{out}");
        // tpu7x's kernel names end with their versions: the row is left out there, kept for v6e
        let (tpu7x, v6e) = out.split_once("v6e ").unwrap();
        assert!(!tpu7x.contains("fp8_mm_v1") && v6e.contains("fp8_mm_v1"), "{out}");
    }

    #[test]
    fn markdown_escapes_and_aligns() {
        let out = markdown(&sample::comparison());
        assert!(out.contains("bug&lt;script&gt;"), "{out}");
        assert!(out.contains("k\\|\"a,b\" &lt;b&gt;&amp;amp;&lt;/b&gt;"), "{out}");
        // every table line of a target has as many cells as its header
        for block in out.split("### ").skip(1) {
            let lines: Vec<&str> = block.lines().filter(|l| l.starts_with('|')).collect();
            let cells = |l: &str| l.replace("\\|", "").matches('|').count();
            assert!(lines.iter().all(|l| cells(l) == cells(lines[0])), "{block}");
        }
        let pick = "; pick v1 (fastest without errors or warnings; ✗ errors, ! warnings)";
        assert!(out.contains(&format!("- tpu7x: v2 ! 1.11× v1 (4.50 µs) &gt; v1 (5.00 µs){pick}\n")), "{out}");
    }
}

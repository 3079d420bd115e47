//! Excerpts that fit a terminal. A `tpu_custom_call` line holds its kernel as ~50 kB of base64 and the lines
//! around a finding are often as long, so a diagnostic is not printed from the file itself but from a *view*: the
//! lines its labels need (with one line of context), each long line cut to windows around the labels on it (a
//! context line to the columns of its neighbour's window), every cut on a character boundary and marked `…`.
//! Line numbers and the `[file:line:col]` header stay those of the file.
//!
//! [`Windowed::of`] turns any diagnostic (a finding or an input error) into one that reads from such a view.

use miette::{Diagnostic, LabeledSpan, MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};
use std::collections::BTreeMap;
use std::fmt;

/// Lines longer than this (in bytes) are shown as windows.
const LONG_LINE: usize = 400;
/// Bytes shown on each side of a label on a long line; a context line shows twice this.
const WINDOW: usize = 100;
/// Labels longer than this are cut (an HLO instruction with its backend config is one very long span).
const SPAN_CAP: usize = 120;
/// Lines of context around a label (as the miette hook prints).
const CONTEXT: usize = 1;
/// Labels this many lines apart or closer are read as one stretch, so the lines between them are shown.
const STRETCH: usize = 40;
const ELLIPSIS: &str = "…";

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// A kept stretch of an original line: `len` bytes at `orig` in the file, at `view` in the view.
#[derive(Clone, Copy, Debug)]
struct Piece {
    view: usize,
    orig: usize,
    len: usize,
}

#[derive(Clone, Debug)]
struct ViewLine {
    /// Byte offset of the line's start in the file (`None` for a line the view does not hold).
    orig_start: Option<usize>,
    pieces: Vec<Piece>,
}

/// A miette source over the view of a file: the lines `first_line..` as shown.
#[derive(Clone, Debug)]
pub struct Excerpt {
    name: Option<String>,
    view: String,
    /// 0-based file line of the view's first line.
    first_line: usize,
    lines: Vec<ViewLine>,
}

impl Excerpt {
    /// The file offset a view offset shows (for the header's column).
    fn to_orig(&self, off: usize) -> Option<(usize, usize)> {
        for l in &self.lines {
            for p in &l.pieces {
                if off >= p.view && off <= p.view + p.len {
                    return Some((l.orig_start?, p.orig + (off - p.view)));
                }
            }
        }
        None
    }

    /// The view offset showing a file offset: inside a kept piece exactly, else the nearest kept piece's edge.
    fn to_view(&self, off: usize) -> Option<usize> {
        let mut best: Option<usize> = None;
        for l in &self.lines {
            for p in &l.pieces {
                if off < p.orig {
                    return Some(best.unwrap_or(p.view));
                }
                if off <= p.orig + p.len {
                    return Some(p.view + (off - p.orig));
                }
                best = Some(p.view + p.len);
            }
        }
        best
    }
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let c = self.view.as_str().read_span(span, before, after)?;
        // miette's own column is the byte column within the line when no context is asked (the header): give the
        // file's, not the view's.
        let column = match (before, self.to_orig(span.offset())) {
            (0, Some((line_start, orig))) => orig - line_start,
            _ => c.column(),
        };
        let (data, cspan, line, count) = (c.data(), *c.span(), c.line() + self.first_line, c.line_count());
        Ok(Box::new(match &self.name {
            Some(n) => MietteSpanContents::new_named(n.clone(), data, cspan, line, column, count + self.first_line),
            None => MietteSpanContents::new(data, cspan, line, column, count + self.first_line),
        }))
    }
}

/// One line of the file as read for the view.
struct FileLine {
    start: usize,
    text: String,
}

/// Reads the lines around `span` (with context) from a miette source: (0-based line number, line) pairs.
fn read_lines(src: &dyn SourceCode, span: SourceSpan, name: &mut Option<String>) -> Option<Vec<(usize, FileLine)>> {
    let c = src.read_span(&span, CONTEXT, CONTEXT).ok()?;
    if name.is_none() {
        *name = c.name().map(str::to_string);
    }
    let data = String::from_utf8_lossy(c.data());
    let mut out = Vec::new();
    let mut off = c.span().offset();
    let mut parts: Vec<&str> = data.split('\n').collect();
    if parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    for (line, p) in (c.line()..).zip(parts) {
        let text = p.strip_suffix('\r').unwrap_or(p);
        out.push((line, FileLine { start: off, text: text.to_string() }));
        off += p.len() + 1;
    }
    Some(out)
}

/// Merged, character-aligned windows `(start, end)` (byte positions in `line`) around the given intervals.
fn windows(line: &str, spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut ws: Vec<(usize, usize)> =
        spans.iter().map(|&(s, e)| (floor_char(line, s.saturating_sub(WINDOW)), ceil_char(line, e + WINDOW))).collect();
    ws.sort();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for w in ws {
        match merged.last_mut() {
            // Windows closer than an ellipsis is worth are one window.
            Some(last) if w.0 <= last.1 + 8 => last.1 = last.1.max(w.1),
            _ => merged.push(w),
        }
    }
    merged
}

/// Builds the view of the lines `lines` (file line → line) with the label spans `labels` (file offsets).
fn build(name: Option<String>, lines: &BTreeMap<usize, FileLine>, labels: &[(usize, usize)]) -> Excerpt {
    let (Some(&first), Some(&last)) = (lines.keys().next(), lines.keys().next_back()) else {
        return Excerpt { name, view: String::new(), first_line: 0, lines: Vec::new() };
    };
    // Windows of the lines with labels on them; the first window's start column speaks for context lines.
    let mut cut: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
    for (&n, l) in lines {
        if l.text.len() <= LONG_LINE {
            continue;
        }
        let end = l.start + l.text.len();
        let on: Vec<(usize, usize)> = labels
            .iter()
            .filter(|&&(s, e)| s <= end && e >= l.start)
            .map(|&(s, e)| (s.max(l.start) - l.start, e.min(end) - l.start))
            .collect();
        if !on.is_empty() {
            cut.insert(n, windows(&l.text, &on));
        }
    }
    let labelled: Vec<(usize, usize)> = cut.iter().map(|(&n, w)| (n, w[0].0)).collect();
    let mut view = String::new();
    let mut vlines = Vec::new();
    for n in first..=last {
        let Some(l) = lines.get(&n) else {
            vlines.push(ViewLine { orig_start: None, pieces: Vec::new() });
            view.push('\n');
            continue;
        };
        let ws = if l.text.len() <= LONG_LINE {
            vec![(0, l.text.len())]
        } else if let Some(ws) = cut.get(&n) {
            ws.clone()
        } else {
            // A context line: the columns of the nearest labelled line's window, or the line's start.
            let col = labelled.iter().min_by_key(|(m, _)| m.abs_diff(n)).map(|&(_, c)| c).unwrap_or(0);
            let s = floor_char(&l.text, col);
            vec![(s, floor_char(&l.text, s + 2 * WINDOW))]
        };
        let mut pieces = Vec::new();
        for (i, &(s, e)) in ws.iter().enumerate() {
            if i > 0 || s > 0 {
                view.push_str(ELLIPSIS);
            }
            pieces.push(Piece { view: view.len(), orig: l.start + s, len: e - s });
            view.push_str(&l.text[s..e]);
        }
        if ws.last().is_some_and(|&(_, e)| e < l.text.len()) {
            view.push_str(ELLIPSIS);
        }
        view.push('\n');
        vlines.push(ViewLine { orig_start: Some(l.start), pieces });
    }
    Excerpt { name, view, first_line: first, lines: vlines }
}

/// A diagnostic that shows its source through a view (see the module doc). Owned, so `miette::Report::new`
/// takes it.
pub struct Windowed {
    message: String,
    code: Option<String>,
    severity: Option<miette::Severity>,
    help: Option<String>,
    url: Option<String>,
    src: Option<Excerpt>,
    labels: Vec<LabeledSpan>,
}

impl Windowed {
    pub fn of(d: &dyn Diagnostic) -> Windowed {
        let mut w = Windowed {
            message: d.to_string(),
            code: d.code().map(|c| c.to_string()),
            severity: d.severity(),
            help: d.help().map(|h| h.to_string()),
            url: d.url().map(|u| u.to_string()),
            src: None,
            labels: Vec::new(),
        };
        let (Some(src), Some(labels)) = (d.source_code(), d.labels()) else { return w };
        let mut name = None;
        let mut lines: BTreeMap<usize, FileLine> = BTreeMap::new();
        let mut kept: Vec<(LabeledSpan, usize, usize)> = Vec::new();
        for l in labels {
            let span = SourceSpan::from((l.offset(), l.len().min(SPAN_CAP)));
            let Some(read) = read_lines(src, span, &mut name) else { continue };
            kept.push((l.clone(), span.offset(), span.offset() + span.len()));
            lines.extend(read);
        }
        if kept.is_empty() {
            return w;
        }
        // Labels close together: read the stretch between them too, so that it is shown as it is.
        let (lo, hi) = (lines.keys().next().copied().unwrap_or(0), lines.keys().next_back().copied().unwrap_or(0));
        if hi - lo <= STRETCH && lines.len() < hi - lo + 1 {
            let s = kept.iter().map(|k| k.1).min().unwrap_or(0);
            let e = kept.iter().map(|k| k.2).max().unwrap_or(s);
            if let Some(read) = read_lines(src, SourceSpan::from((s, e - s)), &mut name) {
                lines.extend(read);
            }
        }
        // Label ends on character boundaries of their lines.
        let align = |off: usize, up: bool| -> usize {
            match lines.values().find(|l| off >= l.start && off <= l.start + l.text.len()) {
                Some(l) if up => l.start + ceil_char(&l.text, off - l.start),
                Some(l) => l.start + floor_char(&l.text, off - l.start),
                None => off,
            }
        };
        let spans: Vec<(usize, usize)> = kept.iter().map(|k| (align(k.1, false), align(k.2, true))).collect();
        let x = build(name, &lines, &spans);
        for ((l, _, _), (s, e)) in kept.iter().zip(&spans) {
            let (Some(vs), Some(ve)) = (x.to_view(*s), x.to_view(*e)) else { continue };
            let text = l.label().map(str::to_string);
            let span = (vs, ve.saturating_sub(vs));
            w.labels.push(if l.primary() {
                LabeledSpan::new_primary_with_span(text, span)
            } else {
                LabeledSpan::new_with_span(text, span)
            });
        }
        w.src = Some(x);
        w
    }
}

impl fmt::Debug for Windowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl fmt::Display for Windowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for Windowed {}

impl Diagnostic for Windowed {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.code.as_ref().map(|c| Box::new(c) as Box<dyn fmt::Display>)
    }
    fn severity(&self) -> Option<miette::Severity> {
        self.severity
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn url<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.url.as_ref().map(|u| Box::new(u) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.src.as_ref().map(|s| s as &dyn SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.labels.is_empty() {
            None
        } else {
            Some(Box::new(self.labels.iter().cloned()))
        }
    }
}

/// A report as the miette hook prints it, its excerpts windowed.
pub fn render(r: &miette::Report) -> String {
    let d: &dyn Diagnostic = r.as_ref();
    format!("{:?}", miette::Report::new(Windowed::of(d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error, Diagnostic)]
    #[error("boom")]
    struct D {
        #[source_code]
        src: miette::NamedSource<String>,
        #[label("here")]
        at: SourceSpan,
        #[label("and here")]
        other: Option<SourceSpan>,
    }

    fn view_of(text: &str, at: (usize, usize), other: Option<(usize, usize)>) -> (Excerpt, Vec<LabeledSpan>) {
        let d =
            D { src: miette::NamedSource::new("f.txt", text.to_string()), at: at.into(), other: other.map(Into::into) };
        let w = Windowed::of(&d);
        (w.src.clone().unwrap(), w.labels)
    }

    #[test]
    fn short_lines_are_kept_whole() {
        let text = "line one\nline two has the label\nline three\nline four\n";
        let at = text.find("label").unwrap();
        let (x, labels) = view_of(text, (at, 5), None);
        assert_eq!(x.view, "line one\nline two has the label\nline three\n");
        assert_eq!(x.first_line, 0);
        assert_eq!(&x.view[labels[0].offset()..labels[0].offset() + labels[0].len()], "label");
    }

    #[test]
    fn every_long_line_is_windowed_and_cut_on_character_boundaries() {
        // Context lines of 5 kB around a long labelled line, with multi-byte characters everywhere.
        let ctx = "é".repeat(2500);
        let label_line = format!("{}LABEL{}", "ü".repeat(1000), "ö".repeat(1000));
        let text = format!("{ctx}\n{label_line}\n{ctx}\n");
        let at = text.find("LABEL").unwrap();
        let (x, labels) = view_of(&text, (at, 5), None);
        for l in x.view.lines() {
            assert!(l.len() < 2 * WINDOW + SPAN_CAP + 16, "a line of {} bytes: {l}", l.len());
            assert!(l.starts_with(ELLIPSIS) && l.ends_with(ELLIPSIS), "{l}");
        }
        assert_eq!(x.view.lines().count(), 3);
        let l = &labels[0];
        assert_eq!(&x.view[l.offset()..l.offset() + l.len()], "LABEL");
        // The header speaks of the file: line 2, the label's byte column.
        let c = x.read_span(l.inner(), 0, 0).unwrap();
        assert_eq!((c.line(), c.column()), (1, 2000));
    }

    #[test]
    fn long_labels_are_cut_inside_the_line_on_a_character_boundary() {
        let text = format!("x = {}\n", "─".repeat(300));
        let at = text.find('─').unwrap();
        let (x, labels) = view_of(&text, (at, 900), None);
        let l = &labels[0];
        let shown = &x.view[l.offset()..l.offset() + l.len()];
        assert!(shown.chars().all(|c| c == '─') && shown.len() >= SPAN_CAP, "{shown}");
    }

    #[test]
    fn two_labels_far_apart_on_one_long_line_get_a_window_each() {
        let text = format!("{}A{}B{}\n", "a".repeat(300), "b".repeat(3000), "c".repeat(300));
        let (a, b) = (text.find('A').unwrap(), text.find('B').unwrap());
        let (x, labels) = view_of(&text, (a, 1), Some((b, 1)));
        assert_eq!(x.view.matches(ELLIPSIS).count(), 3, "{}", x.view);
        let shown: Vec<&str> = labels.iter().map(|l| &x.view[l.offset()..l.offset() + l.len()]).collect();
        assert_eq!(shown, ["A", "B"]);
    }

    #[test]
    fn labels_a_few_lines_apart_show_the_lines_between() {
        let text = (0..20).map(|i| format!("line {i}\n")).collect::<String>();
        let (a, b) = (text.find("line 3").unwrap(), text.find("line 9").unwrap());
        let (x, _) = view_of(&text, (a, 4), Some((b, 4)));
        assert_eq!(x.first_line, 2);
        assert_eq!(x.view.lines().next(), Some("line 2"));
        assert!(x.view.contains("line 6\n"), "{}", x.view);
    }
}

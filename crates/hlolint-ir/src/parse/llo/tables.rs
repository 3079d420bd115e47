//! The table-shaped LLO dumps: schedule analysis, per-bundle utilization, memory-space-assignment CSVs.
//!
//! ```text
//! schedule-analysis_final_bundles:
//!   Schedule analysis:
//!   \ttotal scheduled bundles:    684
//!   \tempty scheduled bundles:    10
//!   \tnon empty scheduled bundles: 674
//!   \t 674.00 scheduled bundles (100.00%): %matmul.1 = bf16[2048,2048]{...} custom-call(...), ...   (or `<no hlo>`)
//!   \t[opcode]     674 scheduled bundles (100.00%): custom-call          (1 instances, 674.00 avg)
//! final_hlo-static-per-bundle-utilization:
//!   == CAPACTIY:                                  (sic; CAPACITY accepted too)
//!   MXU, XLU, VALU, VPOP, EUP, VLOAD, VLOAD:FILL, VSTORE, VSTORE:SPILL, SALU
//!       2     2     4     2     1     3     3     2     2     2
//!   == UTILIZATION:
//!   0 0 0 0 0 1 0 0 0 0                           (one row per bundle, in bundle order)
//! memory-space-assignment-{bufferinfo,allocinfo,scheduleinfo}: CSV with a header row; strings in double quotes;
//!   lists inside a field separated by `;` (`"150;151"`, `"reduce.19, operand 0;fusion.9, operand 3"`).
//! ```
//! Columns are looked up by header name, so a column added by a newer libtpu does not break the parser.

use super::lex::{line, record};
use crate::ir::Span;
use crate::parse::error::{PErr, PResult};
use serde::Serialize;

// ---- schedule analysis ------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Default, Serialize)]
pub struct ScheduleAnalysis<'a> {
    /// `total scheduled bundles`, `empty scheduled bundles`, `non empty scheduled bundles`, and any other
    /// `name: N` counter line.
    pub counters: Vec<(&'a str, f64)>,
    /// Bundles attributed to each HLO instruction (or to no instruction: `hlo` is None for `<no hlo>`).
    pub entries: Vec<ScheduleEntry<'a>>,
    /// The `[opcode]` summary lines.
    pub by_opcode: Vec<OpcodeEntry<'a>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ScheduleEntry<'a> {
    pub bundles: f64,
    pub percent: f64,
    /// The HLO instruction name without `%` (`matmul.1`), when there is one.
    pub name: Option<&'a str>,
    /// The whole HLO instruction text.
    pub hlo: Option<&'a str>,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Debug, Serialize)]
pub struct OpcodeEntry<'a> {
    pub opcode: &'a str,
    pub bundles: f64,
    pub percent: f64,
    pub instances: u64,
    pub avg: f64,
    #[serde(skip)]
    pub span: Span,
}

impl<'a> ScheduleAnalysis<'a> {
    pub fn counter(&self, name: &str) -> Option<f64> {
        self.counters.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
    }
    pub fn total_bundles(&self) -> Option<u64> {
        self.counter("total scheduled bundles").map(|v| v as u64)
    }
    /// Bundles attributed to the HLO instruction `name`.
    pub fn bundles_for(&self, name: &str) -> Option<f64> {
        self.entries.iter().find(|e| e.name == Some(name)).map(|e| e.bundles)
    }
}

pub fn schedule_analysis(base: &str) -> PResult<'_, ScheduleAnalysis<'_>> {
    let mut out = ScheduleAnalysis::default();
    let i = base.trim_start_matches([' ', '\t', '\r', '\n']);
    let (first, mut i) = line(i);
    if first.trim() != "Schedule analysis:" {
        return PErr::cut(base, "`Schedule analysis:`");
    }
    while !i.is_empty() {
        // An entry's HLO text may span lines (see `record`).
        let (l, rest) = record(i)?;
        let t = l.trim();
        if t.is_empty() {
            i = rest;
            continue;
        }
        let lspan = Span::of(base, l);
        if let Some(r) = t.strip_prefix("[opcode]") {
            // 674 scheduled bundles (100.00%): custom-call          (1 instances, 674.00 avg)
            let (bundles, percent, tail) = bundles_prefix(r).ok_or_else(|| cut(l, "`N scheduled bundles (P%): `"))?;
            let (opcode, stats) = tail.split_once('(').ok_or_else(|| cut(l, "`(N instances, A avg)`"))?;
            let stats = stats.trim_end_matches(')');
            let (inst, avg) = stats.split_once(',').ok_or_else(|| cut(l, "`N instances, A avg`"))?;
            let instances =
                inst.trim().trim_end_matches("instances").trim().parse().map_err(|_| cut(l, "an instance count"))?;
            let avg = avg.trim().trim_end_matches("avg").trim().parse().map_err(|_| cut(l, "an average"))?;
            out.by_opcode.push(OpcodeEntry { opcode: opcode.trim(), bundles, percent, instances, avg, span: lspan });
        } else if let Some((bundles, percent, tail)) = bundles_prefix(t) {
            let (name, hlo) = if tail.starts_with("<no hlo>") {
                (None, None)
            } else {
                let name = tail.strip_prefix('%').and_then(|s| s.split(" = ").next()).map(str::trim);
                (name, Some(tail))
            };
            out.entries.push(ScheduleEntry { bundles, percent, name, hlo, span: lspan });
        } else if let Some((k, v)) = t.rsplit_once(':') {
            let v = v.trim().parse().map_err(|_| cut(l, "a number after the counter name"))?;
            out.counters.push((k.trim(), v));
        } else {
            return PErr::cut(l, "a counter (`name: N`) or `N scheduled bundles (P%): ...`");
        }
        i = rest;
    }
    Ok((i, out))
}

fn cut<'a>(at: &'a str, e: &'static str) -> nom::Err<PErr<'a>> {
    nom::Err::Failure(PErr::new(at, e))
}

/// `674.00 scheduled bundles (100.00%): rest` → (674.0, 100.0, rest).
fn bundles_prefix(t: &str) -> Option<(f64, f64, &str)> {
    let t = t.trim_start();
    let (n, r) = t.split_once(" scheduled bundles (")?;
    let (p, rest) = r.split_once("%):")?;
    Some((n.trim().parse().ok()?, p.trim().parse().ok()?, rest.strip_prefix(' ').unwrap_or(rest)))
}

// ---- utilization ------------------------------------------------------------------------------------------------

/// Static per-bundle slot use: `rows()[b][u]` is how many slots of unit `units[u]` bundle `b` fills, out of
/// `capacity[u]`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Utilization<'a> {
    pub units: Vec<&'a str>,
    pub capacity: Vec<u32>,
    /// Row-major, `units.len()` values per bundle.
    pub cells: Vec<u32>,
    #[serde(skip)]
    pub capacity_span: Span,
}

impl<'a> Utilization<'a> {
    pub fn unit(&self, name: &str) -> Option<usize> {
        self.units.iter().position(|u| *u == name)
    }
    pub fn bundle_count(&self) -> usize {
        if self.units.is_empty() {
            0
        } else {
            self.cells.len() / self.units.len()
        }
    }
    pub fn row(&self, bundle: usize) -> Option<&[u32]> {
        let w = self.units.len();
        self.cells.get(bundle * w..bundle * w + w)
    }
    pub fn rows(&self) -> impl Iterator<Item = &[u32]> {
        self.cells.chunks(self.units.len().max(1))
    }
    /// Slots of `unit` used over all bundles.
    pub fn total(&self, unit: &str) -> Option<u64> {
        let u = self.unit(unit)?;
        Some(self.rows().filter_map(|r| r.get(u)).map(|&v| v as u64).sum())
    }
    /// Bundles that use `unit` at all.
    pub fn busy_bundles(&self, unit: &str) -> Option<usize> {
        let u = self.unit(unit)?;
        Some(self.rows().filter(|r| r.get(u).is_some_and(|&v| v > 0)).count())
    }
}

pub fn utilization(base: &str) -> PResult<'_, Utilization<'_>> {
    let mut out = Utilization::default();
    let i = base.trim_start_matches([' ', '\t', '\r', '\n']);
    let (h, i) = line(i);
    let ht = h.trim();
    if ht != "== CAPACTIY:" && ht != "== CAPACITY:" {
        return PErr::cut(h, "`== CAPACTIY:`");
    }
    let (units, i) = line(i);
    out.units = units.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if out.units.is_empty() {
        return PErr::cut(units, "the unit names (`MXU, XLU, ...`)");
    }
    let (caps, mut i) = line(i);
    out.capacity_span = Span::of(base, caps);
    out.capacity = numbers(caps, out.units.len())?;
    loop {
        let (l, rest) = line(i);
        if l.trim().is_empty() && !rest.is_empty() {
            i = rest;
            continue;
        }
        if l.trim() != "== UTILIZATION:" {
            return PErr::cut(l, "`== UTILIZATION:`");
        }
        i = rest;
        break;
    }
    out.cells.reserve(i.len() / 2);
    while !i.is_empty() {
        let (l, rest) = line(i);
        if !l.trim().is_empty() {
            let row = numbers(l, out.units.len())?;
            out.cells.extend(row);
        }
        i = rest;
    }
    Ok((i, out))
}

/// Exactly `n` unsigned numbers separated by spaces.
fn numbers(l: &str, n: usize) -> Result<Vec<u32>, nom::Err<PErr<'_>>> {
    let mut v = Vec::with_capacity(n);
    for tok in l.split_ascii_whitespace() {
        if v.len() == n {
            return Err(nom::Err::Failure(PErr::new(tok, format!("end of row after {n} numbers (one per unit)"))));
        }
        match tok.parse() {
            Ok(x) => v.push(x),
            Err(_) => return Err(cut(tok, "a slot count")),
        }
    }
    if v.len() != n {
        return Err(nom::Err::Failure(PErr::new(&l[l.len()..], format!("{n} numbers (one per unit)"))));
    }
    Ok(v)
}

// ---- memory-space-assignment CSVs -------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize)]
pub struct BufferRow<'a> {
    pub buffer_id: i64,
    /// `<12 x.1>`, `scoped allocation for fusion`.
    pub buffer_name: &'a str,
    pub alt_mem_benefit: f64,
    pub size: u64,
    pub definition_time: i64,
    pub use_times: Vec<i64>,
    /// `fusion, operand 1;reduce.19, operand 0` as printed; `uses()` splits it.
    pub use_names: &'a str,
    pub is_scoped: bool,
    #[serde(skip)]
    pub span: Span,
}

impl<'a> BufferRow<'a> {
    /// `(instruction, "operand N")` pairs.
    pub fn uses(&self) -> impl Iterator<Item = (&'a str, &'a str)> {
        self.use_names.split(';').filter(|s| !s.is_empty()).map(|u| match u.split_once(", ") {
            Some((a, b)) => (a, b),
            None => (u, ""),
        })
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct AllocRow {
    pub buffer_id: i64,
    pub size: u64,
    pub offset: u64,
    pub start_time: i64,
    pub end_time: i64,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Debug, Serialize)]
pub struct ScheduleRow<'a> {
    pub time: i64,
    pub instruction_name: &'a str,
    #[serde(skip)]
    pub span: Span,
}

/// A CSV with a header: columns and rows of raw (unquoted) fields.
struct Csv<'a> {
    columns: Vec<&'a str>,
    rows: Vec<(&'a str, Vec<&'a str>)>,
}

fn csv(base: &str) -> Result<Csv<'_>, nom::Err<PErr<'_>>> {
    let i = base.trim_start_matches([' ', '\t', '\r', '\n']);
    let (h, mut i) = line(i);
    let columns: Vec<&str> = h.split(',').map(str::trim).collect();
    let mut rows = Vec::new();
    while !i.is_empty() {
        let (l, rest) = csv_record(i)?;
        if !l.trim().is_empty() {
            rows.push((l, fields(l)?));
        }
        i = rest;
    }
    Ok(Csv { columns, rows })
}

/// One CSV record: up to the first line break outside a quoted field (a quoted field may hold line breaks, and
/// `""` is an escaped quote, as in RFC 4180). A quote still open at the end of the input is an error there.
fn csv_record(i: &str) -> Result<(&str, &str), nom::Err<PErr<'_>>> {
    let b = i.as_bytes();
    let mut quote: Option<usize> = None;
    // A quote opens a field only at the field's start; elsewhere in an unquoted field it is text.
    let mut field_start = true;
    for (k, &c) in b.iter().enumerate() {
        match c {
            // `""` inside a field closes and reopens: the net effect is the same as an escaped quote.
            b'"' if quote.is_some() => quote = None,
            b'"' if field_start => quote = Some(k),
            b',' if quote.is_none() => {
                field_start = true;
                continue;
            }
            b'\n' if quote.is_none() => {
                let l = &i[..k];
                return Ok((l.strip_suffix('\r').unwrap_or(l), &i[k + 1..]));
            }
            _ => {}
        }
        // `""` reopens the field it closed, so the next quote right after a closing one still counts.
        field_start = quote.is_none() && c == b'"';
    }
    match quote {
        Some(at) => Err(cut(&i[at..], "`\"` closing this field before the end of the file")),
        None => Ok((i.strip_suffix('\r').unwrap_or(i), "")),
    }
}

fn fields(l: &str) -> Result<Vec<&str>, nom::Err<PErr<'_>>> {
    let mut out = Vec::new();
    let mut i = l;
    loop {
        if let Some(r) = i.strip_prefix('"') {
            // Quoted: up to the closing quote ("" is an escaped quote).
            let b = r.as_bytes();
            let mut k = 0;
            loop {
                match b.get(k) {
                    None => return Err(cut(i, "closing `\"`")),
                    Some(b'"') if b.get(k + 1) == Some(&b'"') => k += 2,
                    Some(b'"') => break,
                    _ => k += 1,
                }
            }
            out.push(&r[..k]);
            i = &r[k + 1..];
            match i.as_bytes().first() {
                None => break,
                Some(b',') => i = &i[1..],
                _ => return Err(cut(i, "`,` after a quoted field")),
            }
        } else {
            match i.find(',') {
                Some(n) => {
                    out.push(i[..n].trim());
                    i = &i[n + 1..];
                }
                None => {
                    out.push(i.trim());
                    break;
                }
            }
        }
    }
    Ok(out)
}

impl<'a> Csv<'a> {
    fn col(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| *c == name)
    }
}

fn field<'a, T: std::str::FromStr>(
    row: &(&'a str, Vec<&'a str>),
    col: Option<usize>,
    what: &'static str,
) -> Result<Option<T>, nom::Err<PErr<'a>>> {
    let Some(c) = col else { return Ok(None) };
    match row.1.get(c) {
        None => Err(nom::Err::Failure(PErr::new(&row.0[row.0.len()..], what))),
        Some(&"") => Ok(None),
        Some(s) => s.parse().map(Some).map_err(|_| cut(s, what)),
    }
}

fn require_header<'a>(base: &'a str, c: &Csv<'a>, names: &[&'static str]) -> Result<(), nom::Err<PErr<'a>>> {
    for n in names {
        if c.col(n).is_none() {
            let h = line(base.trim_start_matches([' ', '\t', '\r', '\n'])).0;
            return Err(nom::Err::Failure(PErr::new(h, format!("a `{n}` column in the header"))));
        }
    }
    Ok(())
}

pub fn buffer_info(base: &str) -> PResult<'_, Vec<BufferRow<'_>>> {
    let c = csv(base)?;
    require_header(base, &c, &["buffer_id", "size"])?;
    let (id, name, benefit, size, def) =
        (c.col("buffer_id"), c.col("buffer_name"), c.col("alt_mem_benefit"), c.col("size"), c.col("definition_time"));
    let (ut, un, sc) = (c.col("use_times"), c.col("use_names"), c.col("is_scoped"));
    let mut out = Vec::with_capacity(c.rows.len());
    for row in &c.rows {
        let use_times_raw: &str = ut.and_then(|k| row.1.get(k).copied()).unwrap_or("");
        let mut use_times = Vec::new();
        for t in use_times_raw.split(';').filter(|s| !s.is_empty()) {
            use_times.push(t.trim().parse().map_err(|_| cut(t, "a use time"))?);
        }
        out.push(BufferRow {
            buffer_id: field(row, id, "a buffer id")?.unwrap_or(0),
            buffer_name: name.and_then(|k| row.1.get(k).copied()).unwrap_or(""),
            alt_mem_benefit: field(row, benefit, "a number (alt_mem_benefit)")?.unwrap_or(0.0),
            size: field(row, size, "a size in bytes")?.unwrap_or(0),
            definition_time: field(row, def, "a definition time")?.unwrap_or(0),
            use_times,
            use_names: un.and_then(|k| row.1.get(k).copied()).unwrap_or(""),
            is_scoped: field::<i64>(row, sc, "0 or 1 (is_scoped)")?.unwrap_or(0) != 0,
            span: Span::of(base, row.0),
        });
    }
    Ok(("", out))
}

pub fn alloc_info(base: &str) -> PResult<'_, Vec<AllocRow>> {
    let c = csv(base)?;
    require_header(base, &c, &["buffer_id", "offset"])?;
    let (id, size, off, st, en) =
        (c.col("buffer_id"), c.col("size"), c.col("offset"), c.col("start_time"), c.col("end_time"));
    let mut out = Vec::with_capacity(c.rows.len());
    for row in &c.rows {
        out.push(AllocRow {
            buffer_id: field(row, id, "a buffer id")?.unwrap_or(0),
            size: field(row, size, "a size in bytes")?.unwrap_or(0),
            offset: field(row, off, "an offset")?.unwrap_or(0),
            start_time: field(row, st, "a start time")?.unwrap_or(0),
            end_time: field(row, en, "an end time")?.unwrap_or(0),
            span: Span::of(base, row.0),
        });
    }
    Ok(("", out))
}

pub fn schedule_info(base: &str) -> PResult<'_, Vec<ScheduleRow<'_>>> {
    let c = csv(base)?;
    require_header(base, &c, &["time", "instruction_name"])?;
    let (t, n) = (c.col("time"), c.col("instruction_name"));
    let mut out = Vec::with_capacity(c.rows.len());
    for row in &c.rows {
        out.push(ScheduleRow {
            time: field(row, t, "a time step")?.unwrap_or(0),
            instruction_name: n.and_then(|k| row.1.get(k).copied()).unwrap_or(""),
            span: Span::of(base, row.0),
        });
    }
    Ok(("", out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_analysis_lines() {
        let t = "Schedule analysis:\n\ttotal scheduled bundles:    4\n\tempty scheduled bundles:    0\n\tnon empty scheduled bundles: 4\n\t   4.00 scheduled bundles (100.00%): <no hlo>\n\t  54.50 scheduled bundles ( 0.20%): %a.1 = f32[] add(%x, %y)\n\t[opcode]     674 scheduled bundles (100.00%): custom-call          (1 instances, 674.00 avg)";
        let (_, s) = schedule_analysis(t).unwrap();
        assert_eq!(s.total_bundles(), Some(4));
        assert_eq!(s.entries.len(), 2);
        assert_eq!(s.entries[1].name, Some("a.1"));
        assert_eq!(s.bundles_for("a.1"), Some(54.5));
        assert_eq!((s.by_opcode[0].opcode, s.by_opcode[0].instances), ("custom-call", 1));
    }

    #[test]
    fn schedule_entries_span_lines() {
        let t = "Schedule analysis:\n\ttotal scheduled bundles:    5\n\t   5.00 scheduled bundles (100.00%): %k.1 = f32[8]{0} custom-call(%p), frontend_attributes={kernel_metadata={\n\"xprof_metadata\":\"{\\\"block_q\\\": 128}\"\n}}, backend_config={\"name\":\"a\\nb ) ]\"}\n\t[opcode]     5 scheduled bundles (100.00%): custom-call          (1 instances, 5.00 avg)\n";
        let (_, s) = schedule_analysis(t).unwrap();
        assert_eq!(s.entries.len(), 1);
        assert_eq!(s.entries[0].name, Some("k.1"));
        assert!(s.entries[0].hlo.unwrap().ends_with("b ) ]\"}"));
        assert_eq!(s.by_opcode.len(), 1);
        // Cut inside the record: an error at the outermost `{` left open, not a misread counter.
        let cut = &t[..t.find("\"xprof").unwrap()];
        let e = match schedule_analysis(cut) {
            Err(nom::Err::Failure(e)) => e,
            other => panic!("{other:?}"),
        };
        assert!(e.at.starts_with("{kernel_metadata={\n") && e.expected.contains('}'), "{:?}", e.at);
    }

    #[test]
    fn csv_quoted_fields_span_lines() {
        let t = "time,instruction_name\n0,\"a\nb\"\n1,\"say \"\"hi\"\"\"\n2,x\"y\n";
        let (_, s) = schedule_info(t).unwrap();
        let names: Vec<_> = s.iter().map(|r| r.instruction_name).collect();
        assert_eq!(names, ["a\nb", "say \"\"hi\"\"", "x\"y"]);
        assert!(schedule_info("time,instruction_name\n0,\"open\n").is_err());
    }

    #[test]
    fn utilization_rows() {
        let t = "== CAPACTIY:\nMXU, XLU, SALU\n    2     2     2\n== UTILIZATION:\n0 0 1\n2 0 0\n";
        let (_, u) = utilization(t).unwrap();
        assert_eq!(u.capacity, [2, 2, 2]);
        assert_eq!(u.bundle_count(), 2);
        assert_eq!(u.total("MXU"), Some(2));
        assert!(utilization("== CAPACTIY:\nMXU, XLU\n2 2\n== UTILIZATION:\n0 0 0\n").is_err());
    }

    #[test]
    fn csv_tables() {
        let t = "buffer_id,buffer_name,alt_mem_benefit,size,definition_time,use_times,use_names,is_scoped\n11,\"<12 x.1>\",0,2097152,1,\"2;3\",\"fusion, operand 1;add, operand 0\",0\n";
        let (_, b) = buffer_info(t).unwrap();
        assert_eq!(b[0].use_times, [2, 3]);
        assert_eq!(b[0].uses().collect::<Vec<_>>(), [("fusion", "operand 1"), ("add", "operand 0")]);
        let (_, a) = alloc_info("buffer_id,size,offset,start_time,end_time\n-12,14,1048576,2,2").unwrap();
        assert_eq!(a[0].buffer_id, -12);
        let (_, s) = schedule_info("time,instruction_name\n0,w.1\n").unwrap();
        assert_eq!(s[0].instruction_name, "w.1");
        assert!(alloc_info("buffer_id,size,offset\n1,x,2").is_err());
    }
}

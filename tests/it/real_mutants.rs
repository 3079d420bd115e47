//! Planted bugs in kernels we did not write: each mutant in tests/data/real_mutants/mutants.toml edits the Mosaic
//! dump of one of jax's own DMA kernels (fixtures/jax_pallas_ops), and each in tpu_inference.toml one of
//! tpu-inference's production kernels (fixtures/tpu_inference), and names the finding a correct linter must give
//! (rule code, hit kind, line). The expectations come from reasoning about the kernel (the `why` of each mutant),
//! not from the linter's current output.

use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Deserialize)]
struct Table {
    mutant: Vec<Mutant>,
    /// Unmutated kernels with findings: `folder`, `pack`, `status` and `status_why` — `false-findings` (today's
    /// engine is known to be wrong there) or `true-findings` (the kernel fails on some input, e.g. one its callers
    /// never pass, and the finding says which). Their errors and warnings are printed, not failed on; once a
    /// kernel lints clean the test fails until its entry is removed.
    #[serde(default)]
    original: Vec<Original>,
}

#[derive(Deserialize)]
struct Original {
    folder: String,
    pack: String,
    status: String,
    status_why: String,
}

#[derive(Deserialize)]
struct Mutant {
    id: String,
    folder: String,
    stage: String,
    /// The Mosaic function the dump holds, for a folder with several kernels (ragged paged attention v3 compiles
    /// a decode and a mixed kernel, each with its own dump): the dump whose text defines `func.func @"<func>"`.
    func: Option<String>,
    pack: String,
    code: String,
    kind: String,
    at: String,
    /// Which occurrence of `at` the finding is on (1 = the first, the default): unrolled code repeats an op's text.
    at_nth: Option<usize>,
    why: String,
    /// Not found yet, said plainly: `inconclusive` (the analysis must say so on this kernel, never pass it),
    /// `missed` (a known gap, with `status_why`) or `pending` (today's engine is not expected to decide this
    /// kernel: too slow — a lint over the time limit counts as not found — or wrong on the original; printed as a
    /// notice, with `status_why`). A mutant with a status that starts being found fails the test until the status
    /// is removed, so progress and regressions both show.
    status: Option<String>,
    status_why: Option<String>,
    edit: Vec<Edit>,
}

/// One edit: `find` (literal) or `regex` replaced by `replace`, or the lines from `move_from` up to (not including)
/// `move_until` moved before `move_before` (later or earlier in the text: a wait moved below a read, or a read
/// moved above its wait). Every pattern occurs exactly `count` times (default 1).
#[derive(Deserialize)]
struct Edit {
    find: Option<String>,
    regex: Option<String>,
    replace: Option<String>,
    move_from: Option<String>,
    move_until: Option<String>,
    move_before: Option<String>,
    count: Option<usize>,
}

/// The JSON report carries a finding's label, not its hit kind; these are the labels each analysis gives a kind
/// (src/analysis/{dma_balance,dma_race,dma_pipeline,smem}.rs).
const KIND_LABELS: &[(&str, &str)] = &[
    ("never-waited", "DMA started here is never waited"),
    ("wait-without-start", "nothing is outstanding on this semaphore here"),
    ("wait-exceeds-signals", "this wait takes more than is outstanding on its semaphore"),
    ("single-slot", "DMA refilling a single slot"),
    ("no-overlap", "DMA waited with nothing overlapping it"),
    ("read-while-filling", "read while a DMA into it may be in flight"),
    ("write-while-filling", "written while a DMA into it may be in flight"),
    ("write-while-sending", "written while a DMA out of it may be in flight"),
    ("data-in-smem", "data in SMEM"),
];

const RULES: &[&str] = &["MO010", "MO011", "MO021", "MO030"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The one Mosaic dump of `stage` in a fixture folder (dump names carry timestamps that change on regeneration),
/// of the function `func` when the folder holds several kernels.
fn dump(set: &str, folder: &str, stage: &str, func: Option<&str>) -> PathBuf {
    let dir = root().join("fixtures").join(set).join(folder).join("mosaic");
    let found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains(&format!("-{stage}."))))
        .filter(|p| func.is_none_or(|f| std::fs::read_to_string(p).unwrap().contains(&format!("func.func @\"{f}\"("))))
        .collect();
    assert_eq!(found.len(), 1, "{}: want one {stage} dump of {func:?}, found {found:?}", dir.display());
    found.into_iter().next().unwrap()
}

fn occurrences(text: &str, pat: &str) -> Vec<usize> {
    text.match_indices(pat).map(|(i, _)| i).collect()
}

fn apply(id: &str, text: &str, e: &Edit) -> String {
    let count = e.count.unwrap_or(1);
    let want = |what: &str, n: usize| assert_eq!(n, count, "{id}: {what} occurs {n} times, the table says {count}");
    if let Some(find) = &e.find {
        want(find, occurrences(text, find).len());
        return text.replace(find.as_str(), e.replace.as_deref().unwrap_or(""));
    }
    if let Some(re) = &e.regex {
        let re = regex::Regex::new(re).unwrap();
        want(re.as_str(), re.find_iter(text).count());
        return re.replace_all(text, e.replace.as_deref().unwrap_or("")).into_owned();
    }
    let (from, until, before) = (
        e.move_from.as_deref().expect("an edit needs find, regex or move_from"),
        e.move_until.as_deref().expect("move_until"),
        e.move_before.as_deref().expect("move_before"),
    );
    let (f, u, b) = (occurrences(text, from), occurrences(text, until), occurrences(text, before));
    want(from, f.len());
    want(until, u.len());
    want(before, b.len());
    // the k-th span moves before the k-th anchor; from the last so earlier offsets stay valid (every move of one
    // edit stays within its own copy: the spans and anchors of copy k lie between those of copies k - 1 and k + 1)
    let mut out = text.to_string();
    for k in (0..count).rev() {
        let (s, end, at) = (f[k], u[k], b[k]);
        assert!(s < end, "{id}: move #{k}: want from < until, got {s} {end}");
        assert!(end <= at || at <= s, "{id}: move #{k}: the anchor {at} is inside the moved span {s}..{end}");
        let chunk = out[s..end].to_string();
        if end <= at {
            out.insert_str(at, &chunk);
            out.replace_range(s..end, "");
        } else {
            out.replace_range(s..end, "");
            out.insert_str(at, &chunk);
        }
    }
    out
}

fn line_of(text: &str, pat: &str, nth: usize) -> Option<usize> {
    let i = occurrences(text, pat).get(nth.checked_sub(1)?).copied()?;
    Some(hlolint::ir::LineIndex::new(text).line(i))
}

/// (code, label, line, verdict, severity) of every finding of the DMA/SMEM rules.
type Found = (String, String, usize, String, String);

/// A compilation folder as a user has it: the (mutated) Mosaic dump in `mosaic/` beside the fixture's optimized HLO
/// in `hlo/` (the host call gives the kernel's scalar-prefetch constants, e.g. paged attention's buffer index and
/// init flag; the kernel body decoded from it is the unmutated one, and the dump speaks for the kernel).
fn compilation(tmp: &Path, name: &str, set: &str, folder: &str, dump: &Path, text: &str) -> PathBuf {
    let target = folder.rsplit_once('@').map_or("tpu7x", |(_, t)| t);
    let dir = tmp.join(format!("{name}@{target}"));
    std::fs::create_dir_all(dir.join("mosaic")).unwrap();
    std::fs::create_dir_all(dir.join("hlo")).unwrap();
    std::fs::write(dir.join("mosaic").join(dump.file_name().unwrap()), text).unwrap();
    let hlo = root().join("fixtures").join(set).join(folder).join("hlo");
    for e in std::fs::read_dir(&hlo).unwrap().filter_map(Result::ok) {
        let n = e.file_name().to_string_lossy().to_string();
        if n.ends_with(".after_optimizations.txt") {
            std::fs::copy(e.path(), dir.join("hlo").join(&n)).unwrap();
        }
    }
    dir
}

/// The findings of the DMA/SMEM rules and the seconds the lint took; `None` when it ran past `limit`.
fn lint(file: &Path, pack: &str, limit: Option<Duration>) -> (Option<Vec<Found>>, f64) {
    let t = Instant::now();
    let mut cmd = crate::common::hlolint();
    cmd.args(["--isolated", "--rules", pack, "--format", "json"]).arg(file);
    if let Some(limit) = limit {
        cmd.timeout(limit);
    }
    let out = cmd.output().unwrap();
    let secs = t.elapsed().as_secs_f64();
    if limit.is_some_and(|l| t.elapsed() >= l) && out.status.code().is_none() {
        return (None, secs);
    }
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{}: {e}: {}", file.display(), String::from_utf8_lossy(&out.stderr)));
    let s = |f: &Value, k: &str| f[k].as_str().unwrap_or("").to_string();
    let found = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| RULES.contains(&f["code"].as_str().unwrap_or("")))
        .map(|f| {
            let line = f["start"]["line"].as_u64().unwrap_or(0) as usize;
            (s(f, "code"), s(f, "label"), line, s(f, "verdict"), s(f, "severity"))
        })
        .collect();
    (Some(found), secs)
}

fn show(found: &[Found]) -> String {
    if found.is_empty() {
        return "  (no MO010/MO011/MO021/MO030 finding)".into();
    }
    found
        .iter()
        .map(|(c, l, n, v, s)| {
            format!("  {c} {s} line {n} `{l}`{}", if v.is_empty() { String::new() } else { format!(" [{v}]") })
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Applies every mutant of `file` (in tests/data/real_mutants/) to the dumps of `fixtures/<set>`, lints it and
/// checks the verdicts as the table says; returns the outcome per mutant (`id → code kind line`, or its status).
/// `limit` bounds each lint: one that runs longer counts as not found (a `pending` mutant's notice says so).
fn run_table(file: &str, set: &str, min_mutants: usize, limit: Option<Duration>) -> Vec<String> {
    let p = root().join("tests/data/real_mutants").join(file);
    let t: Table =
        toml::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    assert!(t.mutant.len() >= min_mutants, "{file}: want at least {min_mutants} mutants");
    let ids: BTreeSet<&str> = t.mutant.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids.len(), t.mutant.len(), "mutant ids are unique");
    let tmp = tempfile::tempdir().unwrap();
    let shown = |found: &Option<Vec<Found>>| match found {
        Some(found) => show(found),
        None => format!("  (over the {}-second limit: not decided)", limit.map_or(0, |l| l.as_secs())),
    };

    // the kernels as their authors wrote them: no error or warning from these rules (inconclusive notes are
    // allowed), unless the table lists the original as a known wrong verdict of today's engine
    let mut failures = Vec::new();
    // what each original gets, so that a finding the original already has (a known false one) is no hit
    let mut before: BTreeMap<(String, Option<String>, String), Vec<Found>> = BTreeMap::new();
    let originals: BTreeSet<(&str, &str, Option<&str>, &str)> =
        t.mutant.iter().map(|m| (m.folder.as_str(), m.stage.as_str(), m.func.as_deref(), m.pack.as_str())).collect();
    for (folder, stage, func, pack) in originals {
        let src = dump(set, folder, stage, func);
        let text = std::fs::read_to_string(&src).unwrap();
        // one folder per original kernel: `original-<version>[-<func>]@<target>`
        let name = format!(
            "original-{}{}",
            folder.split('@').next().unwrap(),
            func.map(|f| format!("-{f}")).unwrap_or_default()
        );
        let dir = compilation(tmp.path(), &name, set, folder, &src, &text);
        let (found, secs) = lint(&dir, pack, limit);
        println!("original {folder} {stage} {func:?} --rules {pack} ({secs:.1} s):\n{}", shown(&found));
        before.insert((folder.into(), func.map(Into::into), pack.into()), found.clone().unwrap_or_default());
        let known = t.original.iter().find(|o| o.folder == folder && o.pack == pack);
        let bad: Vec<&Found> =
            found.iter().flatten().filter(|f| f.3.is_empty() && (f.4 == "error" || f.4 == "warning")).collect();
        match known {
            Some(o) => {
                assert!(
                    ["false-findings", "true-findings"].contains(&o.status.as_str()),
                    "{folder}: an original's status is false-findings or true-findings"
                );
                assert!(!o.status_why.is_empty(), "{folder}: say why the findings are false or true");
                if found.is_some() && bad.is_empty() {
                    failures.push(format!("original {folder} --rules {pack} is clean now; remove its [[original]]"));
                } else {
                    println!("  notice: known {} on the original ({})", o.status, o.status_why);
                }
            }
            None if !bad.is_empty() => failures.push(format!("original {folder} --rules {pack} has findings: {bad:?}")),
            None => {}
        }
    }

    let mut got = Vec::new();
    for m in &t.mutant {
        assert!(!m.why.is_empty(), "{}: say why it is a bug", m.id);
        let label = KIND_LABELS
            .iter()
            .find(|(k, _)| *k == m.kind)
            .unwrap_or_else(|| panic!("{}: unknown kind {}", m.id, m.kind))
            .1;
        let src = dump(set, &m.folder, &m.stage, m.func.as_deref());
        let orig = std::fs::read_to_string(&src).unwrap();
        let text = m.edit.iter().fold(orig.clone(), |t, e| apply(&m.id, &t, e));
        assert_ne!(text, orig, "{}: the edits change nothing", m.id);
        let line = line_of(&text, &m.at, m.at_nth.unwrap_or(1))
            .unwrap_or_else(|| panic!("{}: `{}` not in the mutated text", m.id, m.at));
        // same file name, so the stage is recognised; one folder per mutant
        let dir = compilation(tmp.path(), &m.id, set, &m.folder, &src, &text);
        let (found, secs) = lint(&dir, &m.pack, limit);
        let known = &before[&(m.folder.clone(), m.func.clone(), m.pack.clone())];
        let hit = found
            .iter()
            .flatten()
            .any(|f| f.0 == m.code && f.1 == label && f.2 == line && f.3.is_empty() && !known.contains(f));
        println!(
            "{} {} ({:.1} s): want {} {} at line {line}\n{}",
            if hit { "PASS" } else { "FAIL" },
            m.id,
            secs,
            m.code,
            m.kind,
            shown(&found)
        );
        let inconclusive = found.iter().flatten().any(|f| f.0 == m.code && f.3 == "inconclusive");
        match (hit, m.status.as_deref()) {
            (true, None) => got.push(format!("{} → {} {} line {line}", m.id, m.code, m.kind)),
            (true, Some(st)) => failures.push(format!("{}: found now; remove `status = \"{st}\"`", m.id)),
            (false, Some("inconclusive")) if inconclusive => {
                assert!(m.status_why.is_some(), "{}: say why it is inconclusive", m.id);
                got.push(format!("{} → {} inconclusive", m.id, m.code));
            }
            (false, Some("missed")) => {
                assert!(m.status_why.is_some(), "{}: say why it is missed", m.id);
                got.push(format!("{} → missed", m.id));
            }
            (false, Some("pending")) => {
                let why = m.status_why.as_deref().unwrap_or_else(|| panic!("{}: say why it is pending", m.id));
                println!("  notice: {} pending: {why}", m.id);
                got.push(format!("{} → pending", m.id));
            }
            _ => {
                failures.push(format!("{}: no {} {} finding at line {line}:\n{}", m.id, m.code, m.kind, shown(&found)))
            }
        }
    }
    let decided = ["inconclusive", "missed", "pending"];
    let found = got.iter().filter(|g| !decided.iter().any(|d| g.ends_with(d))).count();
    println!("{found} of {} mutants found", t.mutant.len());
    assert!(failures.is_empty(), "{} of {} checks failed:\n{}", failures.len(), t.mutant.len(), failures.join("\n"));
    got
}

#[test]
fn planted_bugs_in_jax_kernels_are_found() {
    let got = run_table("mutants.toml", "jax_pallas_ops", 12, None);
    insta::assert_snapshot!(got.join("\n"));
}

/// tpu-inference's production kernels (fixtures/tpu_inference). The whole table takes under a minute with the
/// symbolic engine (it took 220 s with the path simulation, when this test was ignored); each lint is still cut
/// at 300 s (a cut one counts as not found). Most kernels are inconclusive today, so most mutants are expected
/// `inconclusive` in the table: a finding that appears (or goes) changes the snapshot.
#[test]
fn planted_bugs_in_tpu_inference_kernels_are_found() {
    let got = run_table("tpu_inference.toml", "tpu_inference", 10, Some(Duration::from_secs(300)));
    insta::assert_snapshot!(got.join("\n"));
}

//! Planted bugs in kernels we did not write: each mutant in tests/data/real_mutants/mutants.toml edits the Mosaic
//! dump of one of jax's own DMA kernels (fixtures/jax_pallas_ops) and names the finding a correct linter must give
//! (rule code, hit kind, line). The expectations come from reasoning about the kernel (the `why` of each mutant),
//! not from the linter's current output.

use assert_cmd::Command;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Deserialize)]
struct Table {
    mutant: Vec<Mutant>,
}

#[derive(Deserialize)]
struct Mutant {
    id: String,
    folder: String,
    stage: String,
    pack: String,
    code: String,
    kind: String,
    at: String,
    why: String,
    /// Not found yet, said plainly: `inconclusive` (the analysis must say so on this kernel, never pass it) or
    /// `missed` (a known gap, with `status_why`). A mutant with a status that starts being found fails the test
    /// until the status is removed, so progress and regressions both show.
    status: Option<String>,
    status_why: Option<String>,
    edit: Vec<Edit>,
}

/// One edit: `find` (literal) or `regex` replaced by `replace`, or the lines from `move_from` up to (not including)
/// `move_until` moved before `move_before`. Every pattern occurs exactly `count` times (default 1).
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
/// (src/analysis/{dma_balance,dma_pipeline,smem}.rs).
const KIND_LABELS: &[(&str, &str)] = &[
    ("never-waited", "DMA started here is never waited"),
    ("wait-without-start", "nothing is outstanding on this semaphore here"),
    ("wait-exceeds-signals", "this wait takes more than is outstanding on its semaphore"),
    ("single-slot", "DMA refilling a single slot"),
    ("wait-after-use", "slot read before its DMA is waited"),
    ("no-overlap", "DMA waited with nothing overlapping it"),
    ("data-in-smem", "data in SMEM"),
];

const RULES: &[&str] = &["MO010", "MO021", "MO030"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn table() -> Table {
    let p = root().join("tests/data/real_mutants/mutants.toml");
    toml::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The one Mosaic dump of `stage` in a fixture folder (dump names carry timestamps that change on regeneration).
fn dump(folder: &str, stage: &str) -> PathBuf {
    let dir = root().join("fixtures/jax_pallas_ops").join(folder).join("mosaic");
    let found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains(&format!("-{stage}."))))
        .collect();
    assert_eq!(found.len(), 1, "{}: want one {stage} dump, found {found:?}", dir.display());
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
    // the k-th span moves before the k-th anchor; from the last so earlier offsets stay valid
    let mut out = text.to_string();
    for k in (0..count).rev() {
        let (s, end, at) = (f[k], u[k], b[k]);
        assert!(s < end && end <= at, "{id}: move #{k}: want from < until <= before, got {s} {end} {at}");
        let chunk = out[s..end].to_string();
        out.insert_str(at, &chunk);
        out.replace_range(s..end, "");
    }
    out
}

fn line_of(text: &str, pat: &str) -> Option<usize> {
    text.find(pat).map(|i| text[..i].matches('\n').count() + 1)
}

/// (code, label, line, verdict, severity) of every finding of the DMA/SMEM rules.
type Found = (String, String, usize, String, String);

/// A compilation folder as a user has it: the (mutated) Mosaic dump in `mosaic/` beside the fixture's optimized HLO
/// in `hlo/` (the host call gives the kernel's scalar-prefetch constants, e.g. paged attention's buffer index and
/// init flag; the kernel body decoded from it is the unmutated one, and the dump speaks for the kernel).
fn compilation(tmp: &Path, name: &str, folder: &str, dump: &Path, text: &str) -> PathBuf {
    let dir = tmp.join(format!("{name}@tpu7x"));
    std::fs::create_dir_all(dir.join("mosaic")).unwrap();
    std::fs::create_dir_all(dir.join("hlo")).unwrap();
    std::fs::write(dir.join("mosaic").join(dump.file_name().unwrap()), text).unwrap();
    let hlo = root().join("fixtures/jax_pallas_ops").join(folder).join("hlo");
    for e in std::fs::read_dir(&hlo).unwrap().filter_map(Result::ok) {
        let n = e.file_name().to_string_lossy().to_string();
        if n.ends_with(".after_optimizations.txt") {
            std::fs::copy(e.path(), dir.join("hlo").join(&n)).unwrap();
        }
    }
    dir
}

fn lint(file: &Path, pack: &str) -> (Vec<Found>, f64) {
    let t = Instant::now();
    let out = Command::cargo_bin("hlolint")
        .unwrap()
        .args(["--isolated", "--rules", pack, "--format", "json"])
        .arg(file)
        .output()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
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
    (found, secs)
}

fn show(found: &[Found]) -> String {
    if found.is_empty() {
        return "  (no MO010/MO021/MO030 finding)".into();
    }
    found
        .iter()
        .map(|(c, l, n, v, s)| {
            format!("  {c} {s} line {n} `{l}`{}", if v.is_empty() { String::new() } else { format!(" [{v}]") })
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn planted_bugs_in_jax_kernels_are_found() {
    let t = table();
    assert!(t.mutant.len() >= 12, "the issue asks for at least 12 mutants");
    let ids: BTreeSet<&str> = t.mutant.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids.len(), t.mutant.len(), "mutant ids are unique");
    let tmp = tempfile::tempdir().unwrap();

    // the kernels as jax wrote them: no error or warning from these rules (inconclusive notes are allowed)
    let mut failures = Vec::new();
    let originals: BTreeSet<(&str, &str, &str)> =
        t.mutant.iter().map(|m| (m.folder.as_str(), m.stage.as_str(), m.pack.as_str())).collect();
    for (folder, stage, pack) in originals {
        let src = dump(folder, stage);
        let dir = compilation(
            tmp.path(),
            &format!("original-{folder}"),
            folder,
            &src,
            &std::fs::read_to_string(&src).unwrap(),
        );
        let (found, secs) = lint(&dir, pack);
        println!("original {folder} {stage} --rules {pack} ({secs:.1} s):\n{}", show(&found));
        let bad: Vec<&Found> =
            found.iter().filter(|f| f.3.is_empty() && (f.4 == "error" || f.4 == "warning")).collect();
        if !bad.is_empty() {
            failures.push(format!("original {folder} --rules {pack} has findings: {bad:?}"));
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
        let src = dump(&m.folder, &m.stage);
        let orig = std::fs::read_to_string(&src).unwrap();
        let text = m.edit.iter().fold(orig.clone(), |t, e| apply(&m.id, &t, e));
        assert_ne!(text, orig, "{}: the edits change nothing", m.id);
        let line = line_of(&text, &m.at).unwrap_or_else(|| panic!("{}: `{}` not in the mutated text", m.id, m.at));
        // same file name, so the stage is recognised; one folder per mutant
        let dir = compilation(tmp.path(), &m.id, &m.folder, &src, &text);
        let (found, secs) = lint(&dir, &m.pack);
        let hit = found.iter().any(|f| f.0 == m.code && f.1 == label && f.2 == line && f.3.is_empty());
        println!(
            "{} {} ({:.1} s): want {} {} at line {line}\n{}",
            if hit { "PASS" } else { "FAIL" },
            m.id,
            secs,
            m.code,
            m.kind,
            show(&found)
        );
        let inconclusive = found.iter().any(|f| f.0 == m.code && f.3 == "inconclusive");
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
            _ => failures.push(format!("{}: no {} {} finding at line {line}:\n{}", m.id, m.code, m.kind, show(&found))),
        }
    }
    let found = got.iter().filter(|g| !g.ends_with("inconclusive") && !g.ends_with("missed")).count();
    println!("{found} of {} mutants found", t.mutant.len());
    assert!(failures.is_empty(), "{} of {} checks failed:\n{}", failures.len(), t.mutant.len(), failures.join("\n"));
    insta::assert_snapshot!(got.join("\n"));
}

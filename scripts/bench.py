#!/usr/bin/env python3
"""Parse speed of hlolint against XLA's own HLO parser and ripgrep, on the same files.

  .venv/bin/python scripts/bench.py [FILE ...]      (default: the largest HLO files of ../shared/corpus)
  .venv/bin/python scripts/bench.py --real-kernels  (only: the real kernels of fixtures/jax_pallas_ops and
                                                     fixtures/tpu_inference: times, slowest analysis, verdicts)
  .venv/bin/python scripts/bench.py --targets       (only: the four ratios against the performance targets)
  .venv/bin/python scripts/bench.py --oracle        (only: every kernel and planted bug of the dynamic oracle under
                                                     jax's TPU interpreter, docs/oracle.md: time and result per run)
  HLOLINT_CORPUS=DIR: the corpus of real dumps when not at ../shared/corpus

- hlolint: `cargo bench --bench parse` (parse into the graph, median of repeated runs, in-process).
- XLA: `hlo_module_from_text` from jaxlib (median of 3, in-process).
- ripgrep: `rg -c ' = '` over the file (median of 5 runs of the process): the floor for "reading the text at all",
  i.e. what today's grep-based checks cost.
Prints MB/s for each and the ratios. Then the whole linter end to end (`target/release/hlolint`, every built-in
pack vs `--rules none`) on each corpus compilation folder: wall time and peak RSS.
Last, the targets of the performance work, each as a ratio measured in the same run (so machine load cancels out
as far as it can): parse vs XLA (≥ 10× faster), whole-corpus lint with every pack vs `rg -c` over the same files
(≤ 10×), 1 vs 2 threads on the corpus (≥ 1.7×), peak RSS vs the largest compilation's text (≤ 3×).
Timings are measurements, not assertions. ripgrep is installed when missing (apt-get as root, else cargo install).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from repo_paths import ROOT, corpus as corpus_dir, target_dir

# the corpus of real dumps: ../shared/corpus beside the checkout, or wherever HLOLINT_CORPUS says
CORPUS = corpus_dir()


def default_files():
    corpus = CORPUS
    if not corpus.is_dir():
        sys.exit(f"bench: {corpus} is absent; give HLO files as arguments")
    files = sorted(corpus.rglob("*after_optimizations.txt"), key=lambda p: p.stat().st_size, reverse=True)
    return files[:3]


def hlolint_times(files):
    out = subprocess.run(
        ["cargo", "bench", "--quiet", "--bench", "parse", "--", *map(str, files)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    return {Path(d["file"]).resolve(): d for d in map(json.loads, (l for l in out.stdout.splitlines() if l.startswith("{")))}


def release_exe():
    """The release binary, built first (where CARGO_TARGET_DIR puts it, else target/ of the checkout)."""
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    return target_dir() / "release" / "hlolint"


def xla_time(text):
    from jax._src.lib import xla_client as xc

    times = []
    for _ in range(3):
        t = time.perf_counter()
        xc.hlo.hlo_module_from_text(text)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def ensure_rg():
    """ripgrep, installed when missing: it is the floor every grep-based check stands on."""
    import os

    if shutil.which("rg"):
        return shutil.which("rg")
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-q", "ripgrep"], capture_output=True)
    if not shutil.which("rg") and shutil.which("cargo"):
        subprocess.run(["cargo", "install", "--quiet", "ripgrep"], capture_output=True)
    return shutil.which("rg")


def rg_time(path):
    rg = ensure_rg()
    if not rg:
        return None
    times = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([rg, "-c", " = ", str(path)], capture_output=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    if sys.argv[1:] == ["--real-kernels"]:
        real_kernel_bench()
        return
    if sys.argv[1:] == ["--oracle"]:
        oracle_bench()
        return
    if sys.argv[1:] == ["--targets"]:
        targets([f.resolve() for f in default_files()])
        return
    files = [Path(f).resolve() for f in sys.argv[1:]] or [f.resolve() for f in default_files()]
    ours = hlolint_times(files)
    if not shutil.which("rg"):
        print("bench: ripgrep (rg) not found; install it (`apt-get install ripgrep` or `cargo install ripgrep`) for that column")
    print(f"{'file':40} {'MB':>6} {'hlolint MB/s':>13} {'XLA MB/s':>9} {'rg MB/s':>8} {'vs XLA':>7} {'vs rg':>6}")
    for f in files:
        mb = f.stat().st_size / 1e6
        h = ours[f]["median_s"]
        x = xla_time(f.read_text())
        r = rg_time(f)
        rg_col = f"{mb / r:8.0f}" if r else f"{'-':>8}"
        vs_rg = f"{r / h:6.2f}" if r else f"{'-':>6}"
        name = f.parent.parent.name if f.parent.name == "hlo" else f.name
        print(f"{name[:40]:40} {mb:6.1f} {mb / h:13.1f} {mb / x:9.1f} {rg_col} {x / h:6.1f}x {vs_rg}")
    print("vs XLA: how many times faster hlolint parses than XLA; vs rg: hlolint's speed as a fraction of ripgrep's scan")
    lint_bench()
    real_kernel_bench()
    targets(files)


def targets(parse_files):
    """The four ratios of the performance targets, with the target beside each."""
    import os

    corpus = CORPUS
    exe = str(release_exe())
    if not corpus.is_dir():
        return
    every = ["-q", "--isolated", "--rules", "core,v1-auto,v2-dma,v3-smem"]
    rows = []
    largest = parse_files[0]
    ours = hlolint_times([largest])[largest]["median_s"]
    xla = xla_time(largest.read_text())
    rows.append(("parse largest HLO: XLA / hlolint", xla / ours, ">= 10", f"{xla:.3f} s / {ours:.3f} s"))
    lint = statistics.median(run_measured([exe, *every, str(corpus)])[0] for _ in range(3))
    rg = ensure_rg()
    if rg:
        # the files the lint reads (a walk skips intermediate stages): rg over the same tree is the floor
        grep = statistics.median(run_measured([rg, "-c", " = ", str(corpus)])[0] for _ in range(5))
        rows.append(("whole corpus: hlolint (every pack) / rg -c", lint / grep, "<= 10", f"{lint:.2f} s / {grep:.3f} s"))
    # 1 and 2 threads alternated, so that a change in the machine's load hits both alike
    one, two = [], []
    for _ in range(3):
        one.append(run_measured([exe, "--threads", "1", *every, str(corpus)])[0])
        two.append(run_measured([exe, "--threads", "2", *every, str(corpus)])[0])
    one, two = statistics.median(one), statistics.median(two)
    rows.append(("whole corpus: 1 thread / 2 threads", one / two, ">= 1.7", f"{one:.2f} s / {two:.2f} s"))
    rss = max(run_measured([exe, *every, str(d)], fresh=True)[1] for d in corpus.iterdir() if d.is_dir())
    biggest = max(sum(f.stat().st_size for f in d.rglob("*") if f.is_file()) for d in corpus.iterdir() if d.is_dir())
    rows.append(("peak RSS / largest compilation's text", rss * 1e6 / biggest, "<= 3", f"{rss:.0f} MB / {biggest / 1e6:.0f} MB"))
    print()
    print(f"{'target':48} {'measured':>9} {'target':>7}  from")
    for name, value, goal, detail in rows:
        print(f"{name:48} {value:8.1f}x {goal:>7}  {detail}")
    print(f"(load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


def run_measured(args, env=None, fresh=False):
    """Wall seconds and peak RSS (MB) of a child process. `fresh`: that child's own peak, measured under GNU time
    (getrusage's children figure is the largest child so far)."""
    import resource
    if fresh and Path("/usr/bin/time").exists():
        t0 = time.perf_counter()
        out = subprocess.run(["/usr/bin/time", "-f", "%M", *args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t0
        return wall, int(out.stderr.strip().splitlines()[-1]) / 1024
    t0 = time.perf_counter()
    subprocess.run(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def lint_bench():
    corpus = CORPUS
    if not corpus.is_dir():
        return
    exe = release_exe()
    print()
    print(f"{'compilation':28} {'MB':>6} {'files':>6} {'parse s':>8} {'lint s':>7} {'rules cost':>10}")
    for d in sorted(p for p in corpus.iterdir() if p.is_dir()):
        files = [f for f in d.rglob("*") if f.is_file()]
        mb = sum(f.stat().st_size for f in files) / 1e6
        base = statistics.median(run_measured([str(exe), "-q", "--isolated", "--rules", "none", str(d)])[0] for _ in range(3))
        full = statistics.median(
            run_measured([str(exe), "-q", "--isolated", "--rules", "core,v1-auto,v2-dma,v3-smem", str(d)])[0] for _ in range(3)
        )
        print(f"{d.name[:28]:28} {mb:6.1f} {len(files):6} {base:8.2f} {full:7.2f} {full / base:9.2f}x")
    _, rss = run_measured([str(exe), "-q", "--isolated", "--rules", "core,v1-auto,v2-dma,v3-smem", str(corpus)])
    print(f"whole corpus, every pack: peak RSS of the largest child so far {rss:.0f} MB")


def real_kernel_bench():
    """The real-kernel corpus (jax's own Pallas kernels in fixtures/jax_pallas_ops, vllm-project/tpu-inference's in
    fixtures/tpu_inference): per compilation, seconds with the core pack and with every pack (median of 3), the
    slowest analysis or rule of the every-pack run (its own wall time, from `HLOLINT_TIMINGS`; analyses that share
    the DMA engine show its time under each), and the verdicts (code:severity or code:inconclusive)."""
    import json

    exe = release_exe()
    every = "core,v1-auto,v2-dma,v3-smem"
    print()
    print(f"{'real kernel':40} {'core s':>7} {'all s':>6} {'slowest rule':>18}  verdicts (all packs)")
    for root in [ROOT / "fixtures" / "jax_pallas_ops", ROOT / "fixtures" / "tpu_inference"]:
        for d in sorted(p for p in root.iterdir() if p.is_dir()):
            name = f"{root.name}/{d.name}"
            core = statistics.median(run_measured([str(exe), "-q", "--isolated", "--rules", "core", str(d)])[0] for _ in range(3))
            full = statistics.median(run_measured([str(exe), "-q", "--isolated", "--rules", every, str(d)])[0] for _ in range(3))
            timed = subprocess.run([str(exe), "-q", "--isolated", "--rules", every, str(d)], cwd=ROOT, capture_output=True,
                                   text=True, env=dict(os.environ, HLOLINT_TIMINGS="1")).stderr
            tasks = [l.split("\t") for l in timed.splitlines() if l.startswith("HLOLINT_TIMINGS\t")]
            slow = max(tasks, key=lambda t: float(t[4]), default=None)
            slowest = f"{slow[2]} {float(slow[4]):.2f}s" if slow else "-"
            out = subprocess.run([str(exe), "--isolated", "--rules", every, "--format", "json", str(d)], cwd=ROOT,
                                 capture_output=True, text=True).stdout
            found = sorted({f"{f.get('code')}:{f.get('verdict') or f['severity']}" for f in json.loads(out)["findings"]})
            print(f"{name[:40]:40} {core:7.2f} {full:6.2f} {slowest:>18}  {' '.join(found) or 'clean'}")


def oracle_bench():
    """The dynamic oracle (docs/oracle.md): each kernel in both DMA execution modes and each planted bug in eager
    mode, in a fresh process each (the interpreter's state and jax's caches start empty), with the wall time of
    the run (interpreter compile included) and what the interpreter saw."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT / "python"))
    listing = subprocess.run([sys.executable, "-c", "import json, hlolint_oracle as o; print(json.dumps("
                              "{n: sorted(c.mutations) for n, c in o.CASES.items()}))"],
                             env=env, capture_output=True, text=True, check=True).stdout
    print()
    print(f"{'oracle run':58} {'mode':8} {'s':>6}  result")
    for kernel, mutations in json.loads(listing).items():
        for mutation, modes in [(None, ["on_wait", "eager"])] + [(m, ["eager"]) for m in mutations]:
            args = [sys.executable, "-m", "hlolint_oracle", kernel, "--json"] + sum((["--mode", m] for m in modes), [])
            if mutation:
                args += ["--mutation", mutation]
            out = subprocess.run(args, env=env, capture_output=True, text=True).stdout
            try:
                results = json.loads(out)
            except json.JSONDecodeError:
                print(f"{kernel + '/' + (mutation or ''):58} {'-':8} {'-':>6}  did not run")
                continue
            for mode, r in results.items():
                found = "clean" if r["clean"] else "; ".join(f[:90] for f in r["findings"][:3])
                name = kernel if mutation is None else f"{kernel}/{mutation}"
                print(f"{name[:58]:58} {mode:8} {r['seconds']:6.1f}  {found}")


if __name__ == "__main__":
    main()

"""The pre-commit hook (`.pre-commit-hooks.yaml`) through the real pre-commit, as a user's repository runs it:
`pre-commit try-repo <this repository> hlolint --files ...` in a temporary git repository holding dumps.

pre-commit installs the hook (`language: python`) by pip-installing this repository, which builds the wheel with
maturin. That build is pointed at cargo's target folder of the checkout (`$CARGO_TARGET_DIR`, else `target/`), so
the dependencies `cargo build --release` already compiled are reused and only hlolint itself is compiled again
(pre-commit builds from its own clone, another source path for cargo).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "fp8_matmul_2d" / "tpu7x+v6e"
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A git repository with a clean compilation (v3 on tpu7x: no finding) and one with a planted bug (a DMA never
    waited), as the driver lays them out, with the driver's manifest and a README beside them."""
    assert PRE_COMMIT.exists(), f"{PRE_COMMIT} is missing: scripts/setup-python.sh installs python/requirements-tools.txt"
    root = tmp_path_factory.mktemp("project")
    dumps = root / "compilation_output"
    dumps.mkdir()
    for version in ("v3@tpu7x", "bug_unwaited_dma@tpu7x"):
        shutil.copytree(FIXTURE / version, dumps / version)
        shutil.copy(FIXTURE / f"{version}_hlo.txt", dumps)
    shutil.copy(FIXTURE / "manifest.json", dumps)
    (root / "README.md").write_text("# our kernels' dumps\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    home = tmp_path_factory.mktemp("pre-commit-home")
    env = dict(
        os.environ,
        PRE_COMMIT_HOME=str(home),
        CARGO_TARGET_DIR=os.environ.get("CARGO_TARGET_DIR", str(REPO / "target")),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        NO_COLOR="1",
    )
    return root, env


def files_of(root: Path, *versions):
    out = []
    for v in versions:
        out.append(f"compilation_output/{v}_hlo.txt")
        out += sorted(str(p.relative_to(root)) for p in (root / "compilation_output" / v).rglob("*") if p.is_file())
    return out + ["compilation_output/manifest.json", "README.md"]


def try_repo(project, files):
    root, env = project
    cmd = [PRE_COMMIT, "try-repo", REPO, "hlolint", "--verbose", "--color", "never", "--files", *files]
    r = subprocess.run([str(c) for c in cmd], cwd=root, env=env, capture_output=True, text=True, timeout=1800)
    return r.returncode, r.stdout + r.stderr


def test_a_clean_compilation_passes(project):
    files = files_of(project[0], "v3@tpu7x")
    # the hook's pattern hands hlolint XLA's memory-usage report too: skipped as a non-dump, not an error
    assert [f for f in files if f.endswith("-memory-usage-report.txt")], files
    code, out = try_repo(project, files)
    assert code == 0, out
    assert "hlolint (XLA/Pallas dumps)" in out and "Passed" in out, out
    # the hook's format is concise: a clean run prints no finding line
    assert not [l for l in out.splitlines() if "[dump: " in l], out


def test_a_planted_bug_fails_with_its_diagnostic(project):
    code, out = try_repo(project, files_of(project[0], "v3@tpu7x", "bug_unwaited_dma@tpu7x"))
    assert code == 1, out
    assert "Failed" in out, out
    # concise lines (the hook's format): the kernel's Python line first, the dump after it
    found = [l for l in out.splitlines() if " MO010 " in l]
    assert found and all("is never waited" in l or "[dump: " in l for l in found), out
    # one hlolint process saw both compilations: each finding once, all in the buggy version
    assert len(found) == len(set(found)), out
    assert all("bug_unwaited_dma@tpu7x" in l for l in found), out

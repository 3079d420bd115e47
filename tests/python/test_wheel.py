"""The wheel as a JAX user gets it: built with maturin (`bindings = "bin"`), installed into a fresh venv, and run from
a folder outside the repository, so nothing it reads can come from the source tree by accident.

The build reuses cargo's target folder (`target/`, or `$CARGO_TARGET_DIR`): after `cargo build --release` (which
`scripts/test` runs first) it only packs the binary.
"""

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "fp8_matmul_2d" / "tpu7x+v6e"
BIN = Path(sys.executable).parent


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    return subprocess.run([str(c) for c in cmd], **kw)


def build_wheel(out: Path) -> Path:
    """`maturin build --release` of the repository into `out`; the one wheel it made."""
    maturin = BIN / "maturin"
    assert maturin.exists(), f"{maturin} is missing: scripts/setup-python.sh installs python/requirements-tools.txt"
    r = run([maturin, "build", "--release", "--out", out], cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    wheels = list(out.glob("hlolint-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return build_wheel(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """The `hlolint` executable of the wheel, installed into a fresh venv (no index: the wheel needs nothing)."""
    env_dir = tmp_path_factory.mktemp("installed") / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    r = run([env_dir / "bin" / "python", "-m", "pip", "install", "--no-index", "--no-deps", wheel])
    assert r.returncode == 0, r.stdout + r.stderr
    exe = env_dir / "bin" / "hlolint"
    assert exe.exists(), list((env_dir / "bin").iterdir())
    return exe


@pytest.fixture
def outside(tmp_path):
    """A working folder outside the repository, and a scratch TMPDIR (where `hlolint test` writes the embedded cases)."""
    work = tmp_path / "work"
    work.mkdir()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = dict(os.environ, NO_COLOR="1", TMPDIR=str(scratch))
    env.pop("HLOLINT_BIN", None)  # the wheel's own binary, found by the package
    return work, scratch, env


PACKAGE = {"hlolint/__init__.py", "hlolint/__main__.py", "hlolint/_binary.py", "hlolint/_check.py",
           "hlolint/_findings.py", "hlolint/_kernel_names.py"}


def test_the_wheel_holds_the_binary_the_python_package_and_metadata_only(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert [n for n in names if n.endswith(".data/scripts/hlolint")], names
    # rule packs and their cases are inside the binary, not files beside it; of python/ only the package
    others = [n for n in names if ".dist-info/" not in n and not n.endswith(".data/scripts/hlolint")]
    assert set(others) == PACKAGE, others
    # jax is optional: the wheel requires nothing
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    assert "Requires-Dist" not in zipfile.ZipFile(wheel).read(metadata).decode(), metadata


# What the bundled fixtures' planted bugs (and the emulated-fp8 note on v6e) give: compilation folder -> codes.
EXPECTED = {
    "bug_any_in_vmem@tpu7x": {"XL003", "HL011"},
    "bug_any_in_vmem@v6e": {"XL001"},
    "bug_scales_vmem@tpu7x": {"MO030"},
    "bug_scales_vmem@v6e": {"XL001", "MO030"},
    "bug_single_slot@tpu7x": {"MO011", "MO021"},
    "bug_single_slot@v6e": {"XL001", "MO011", "MO021"},
    "bug_unwaited_dma@tpu7x": {"MO010", "MO011"},
    "bug_unwaited_dma@v6e": {"XL001", "MO010", "MO011"},
    "bug_upcast@tpu7x": {"HL011", "MO001"},
    "bug_upcast@v6e": {"MO001"},
    "v1@tpu7x": {"HL011"},
    "v1@v6e": {"XL001"},
    "v2@v6e": {"XL001"},
    "v3@v6e": {"XL001"},
}


def test_installed_hlolint_lints_the_bundled_fixtures(installed, outside):
    work, _, env = outside
    r = run([installed, "--format", "json", FIXTURE], cwd=work, env=env)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["errors"] == []
    got = {}
    for f in doc["findings"]:
        got.setdefault(Path(f["compilation"]).name, set()).add(f["code"])
    assert got == EXPECTED
    # each version with its own pack, as the driver's manifest says (MO021/MO030 come from v2-dma/v3-smem)
    packs = {Path(c["dir"]).name: c["rules"] for c in doc["compilations"]}
    assert packs["v3@v6e"].startswith("v3-smem"), packs
    # the human report names the planted bug
    r = run([installed, FIXTURE / "bug_unwaited_dma@tpu7x"], cwd=work, env=env)
    assert r.returncode == 1
    assert "MO010 dma-balance" in r.stdout and "is never waited" in r.stdout, r.stdout


def test_installed_package_imports_and_runs_the_binary_without_jax(installed, outside):
    work, _, env = outside
    python = installed.parent / "python"
    r = run([python, "-c", "import hlolint, sys; print(hlolint.find_hlolint_bin()); print('jax' in sys.modules)"],
            cwd=work, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(installed), "False"], r.stdout
    r = run([python, "-m", "hlolint", "--format", "concise", FIXTURE / "bug_unwaited_dma@tpu7x"], cwd=work, env=env)
    assert r.returncode == 1 and "MO010" in r.stdout, r.stdout + r.stderr
    # check() needs jax, and says so
    r = run([python, "-c", "import hlolint; hlolint.check(len, 1)"], cwd=work, env=env)
    assert r.returncode == 1 and "hlolint.check compiles a JAX computation and needs jax" in r.stderr, r.stderr


def test_installed_package_checks_a_kernel_with_the_users_jax(installed, outside, tmp_path):
    """The wheel's `hlolint.check` in an environment that also has jax: the test's own venv's site-packages added
    after the fresh venv's (a .pth file), so `hlolint` is the wheel's and jax the test environment's."""
    work, _, env = outside
    python = installed.parent / "python"
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip()
    jax_site = Path(__import__("jax").__file__).parents[1]
    (Path(site) / "with_jax.pth").write_text(f"{jax_site}\n")
    try:
        script = work / "test_user.py"
        script.write_text(f"""
import sys
sys.path.append({str(REPO / 'examples')!r})
import fp8_matmul_2d as m
import hlolint

def test_unwaited_dma():
    assert hlolint.__file__.startswith({site!r}), hlolint.__file__
    found = hlolint.check(m.VERSIONS["bug_unwaited_dma"], *m.example_args(), target="tpu7x", rules="v2-dma")
    assert found.codes() == {{"MO010", "MO011"}}, found
    assert all(f.python.file.endswith("kernels.py") for f in found)
""")
        r = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", script], cwd=work,
                env=dict(env, JAX_PLATFORMS="cpu"), timeout=1200)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        (Path(site) / "with_jax.pth").unlink()


def test_installed_hlolint_tests_a_user_pack_extending_core(installed, outside):
    work, scratch, env = outside
    (work / "cases").mkdir()
    (work / "cases" / "dot.hlo").write_text(
        "HloModule m\n\nENTRY %e (a: f32[8,8]) -> f32[8,8] {\n  %a = f32[8,8]{1,0} parameter(0)\n"
        "  ROOT %d = f32[8,8]{1,0} dot(%a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"
    )
    (work / "cases" / "nodot.hlo").write_text(
        "HloModule m\n\nENTRY %e (a: f32[8,8]) -> f32[8,8] {\n  ROOT %a = f32[8,8]{1,0} parameter(0)\n}\n"
    )
    (work / "team.yaml").write_text(
        "pack: team\nextends: [core]\nrules:\n"
        "  - id: any-f32-dot\n    code: TM001\n    severity: warning\n    layer: hlo\n"
        "    select: { op: dot, dtype: f32 }\n    message: \"{op.name} multiplies f32\"\n"
        "    tests:\n      valid: [cases/nodot.hlo]\n      invalid: [cases/dot.hlo]\n"
    )
    core = json.loads(run([installed, "rules", "--rules", "core", "--json"], cwd=work, env=env).stdout)
    n_core = len(core["rules"])
    assert n_core >= 9
    r = run([installed, "test", "./team.yaml"], cwd=work, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{n_core + 1} rule(s) passed, 0 failed" in r.stdout, r.stdout
    assert "✓ TM001" in r.stdout and "✓ MO010" in r.stdout, r.stdout
    # every built-in pack against its own cases, too
    r = run([installed, "test"], cwd=work, env=env)
    assert r.returncode == 0 and ", 0 failed" in r.stdout, r.stdout + r.stderr
    # the embedded cases were written under TMPDIR for the run and removed after it
    assert list(scratch.iterdir()) == []

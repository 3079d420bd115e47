#!/usr/bin/env bash
# Create (or reuse) .venv in the repository root and install python/requirements-jax.txt (jax, pytest) and
# python/requirements-tools.txt (maturin for the wheel, pre-commit for the hook) from PyPI, and
# python/requirements-kernels.txt and python/requirements-oracle.txt (tpu-inference's kernels, for examples/tpu_inference
# and the dynamic oracle) without their dependencies.
#
# Idempotent: when the venv exists and every requirement is already satisfied, it installs nothing.
# Safe to re-run; CI calls it. Prints what it did.
#
# Environment:
#   PYTHON      interpreter to create the venv with (default: python3.11, else python3)
#   HLOLINT_VENV  venv directory (default: <repo>/.venv)
#
# libtpu: `jax[tpu]` depends on the `libtpu` wheel, which is on PyPI, so no extra index
# (no `-f .../libtpu_releases.html`) is needed with jax 0.10.2.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
reqs=("$repo/python/requirements-jax.txt" "$repo/python/requirements-tools.txt")
# installed with --no-deps: their own dependency pins (vLLM, torch, another jax) are not what the examples use
nodeps=("$repo/python/requirements-kernels.txt" "$repo/python/requirements-oracle.txt")
venv="${HLOLINT_VENV:-$repo/.venv}"

if [[ -z "${PYTHON:-}" ]]; then
  if command -v python3.11 >/dev/null 2>&1; then PYTHON=python3.11; else PYTHON=python3; fi
fi

log() { echo "setup-python: $*"; }
start=$(date +%s)

if [[ -x "$venv/bin/python" ]]; then
  log "reusing venv $venv ($("$venv/bin/python" --version 2>&1))"
else
  log "creating venv $venv with $PYTHON ($("$PYTHON" --version 2>&1))"
  "$PYTHON" -m venv "$venv"
fi
py="$venv/bin/python"

# Fast path: are all requirements already satisfied? (pure check, no network). Files after "--no-deps" are
# checked for the named distributions only, not for their dependencies.
if "$py" - "${reqs[@]}" --no-deps "${nodeps[@]}" <<'PYEOF'
import sys
from importlib import metadata
try:
    from packaging.requirements import Requirement
except ImportError:
    try:
        from pip._vendor.packaging.requirements import Requirement
    except ImportError:
        sys.exit(1)

def satisfied(req, seen, deps=True):
    key = (req.name.lower(), tuple(sorted(req.extras)))
    if key in seen:
        return True
    seen.add(key)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        return True
    try:
        dist = metadata.distribution(req.name)
    except metadata.PackageNotFoundError:
        return False
    if req.specifier and not req.specifier.contains(dist.version, prereleases=True):
        return False
    if not deps:
        return True
    for extra in req.extras:
        for dep in dist.requires or []:
            r = Requirement(dep)
            if r.marker is not None and r.marker.evaluate({"extra": extra}) and \
               not r.marker.evaluate({"extra": ""}):
                if not satisfied(r, seen):
                    return False
    return True

ok = True
deps = True
for path in sys.argv[1:]:
    if path == "--no-deps":
        deps = False
        continue
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if not satisfied(Requirement(line), set(), deps):
            print(f"setup-python: missing or wrong version: {line}")
            ok = False
sys.exit(0 if ok else 1)
PYEOF
then
  log "all requirements already satisfied; nothing to install"
else
  log "installing ${reqs[*]} from PyPI (jax[tpu] with libtpu is ~1.3 GB; the first run takes a few minutes)"
  "$py" -m pip install --disable-pip-version-check --no-cache-dir --upgrade pip >/dev/null
  "$py" -m pip install --disable-pip-version-check --no-cache-dir "${reqs[@]/#/-r}"
  "$py" -m pip install --disable-pip-version-check --no-cache-dir --no-deps "${nodeps[@]/#/-r}"
fi

"$py" - <<'PYEOF'
from importlib import metadata
def v(n):
    try:
        return metadata.version(n)
    except metadata.PackageNotFoundError:
        return "not installed"
print("setup-python: " + ", ".join(f"{n} {v(n)}" for n in ("jax", "jaxlib", "libtpu", "pytest", "maturin", "pre-commit", "tpu-inference")))
PYEOF
log "done in $(( $(date +%s) - start ))s; activate with: source $venv/bin/activate"

"""pytest setup for the Python side (examples, the compile driver and python/hlolint_oracle).

Tests run on CPU: JAX_PLATFORMS=cpu keeps jax from initialising libtpu (which would take
/tmp/libtpu_lockfile and clash with a compile running at the same time). Compile tests start the
driver, whose workers use compile-only TPU topologies.
"""

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
for sub in ("examples", os.path.join("src", "driver"), "python"):
    path = os.path.join(REPO, sub)
    if path not in sys.path:
        sys.path.insert(0, path)


@pytest.fixture(scope="session")
def hlolint_bin() -> Path:
    """The binary scripts/test builds: $HLOLINT, else the release (then debug) build in the cargo target dir."""
    if os.environ.get("HLOLINT"):
        return Path(os.environ["HLOLINT"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target")))
    for profile in ("release", "debug"):
        exe = target / profile / "hlolint"
        if exe.is_file():
            return exe
    pytest.fail(f"no hlolint binary under {target}; run `cargo build --release` or set HLOLINT")

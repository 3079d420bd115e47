"""pytest setup for the Python side (examples, the compile driver and python/hlolint_oracle).

Tests run on CPU: JAX_PLATFORMS=cpu keeps jax from initialising libtpu (which would take
/tmp/libtpu_lockfile and clash with a compile running at the same time). Compile tests start the
driver, whose workers use compile-only TPU topologies.
"""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
for sub in ("examples", os.path.join("src", "driver"), "python"):
    path = os.path.join(REPO, sub)
    if path not in sys.path:
        sys.path.insert(0, path)

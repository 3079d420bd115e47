"""Where the scripts find the checkout's surroundings: one home for the paths they share.

Imported by the scripts beside it (`python scripts/X.py` puts scripts/ first on sys.path).
"""
import os
from pathlib import Path

# the checkout: this file is scripts/repo_paths.py
ROOT = Path(__file__).resolve().parent.parent


def corpus() -> Path:
    """The corpus of real dumps: ../shared/corpus beside the checkout, or wherever HLOLINT_CORPUS says (e.g. from a
    git worktree). It may be absent; callers check."""
    return Path(os.environ.get("HLOLINT_CORPUS", ROOT.parent / "shared" / "corpus"))


def target_dir() -> Path:
    """Where cargo puts its builds: CARGO_TARGET_DIR, else target/ of the checkout."""
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))

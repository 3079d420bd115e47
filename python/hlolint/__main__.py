"""`python -m hlolint ARGS...`: the bundled `hlolint` executable with the same arguments and exit code."""

from __future__ import annotations

import os
import subprocess
import sys

from ._binary import BinaryNotFound, find_hlolint_bin


def main() -> int:
    try:
        exe = find_hlolint_bin()
    except BinaryNotFound as exc:
        print(f"hlolint: {exc}", file=sys.stderr)
        return 2
    if sys.platform == "win32":
        # no exec on Windows: run it and hand its exit code on
        return subprocess.run([exe, *sys.argv[1:]]).returncode
    # replace this process, so signals, the terminal and the exit code are the binary's own
    os.execv(exe, [exe, *sys.argv[1:]])
    return 2  # not reached


if __name__ == "__main__":
    sys.exit(main())

"""Where the `hlolint` executable of this installation is.

The wheel installs the binary into the environment's scripts folder (maturin `bindings = "bin"`), beside the Python
that imported this package; `HLOLINT_BIN` names another one (the test suite points it at cargo's build).
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig

EXE = "hlolint.exe" if sys.platform == "win32" else "hlolint"


class BinaryNotFound(FileNotFoundError):
    pass


def find_hlolint_bin() -> str:
    """The path of the `hlolint` executable: `$HLOLINT_BIN`, else the scripts folder of this interpreter's
    installation scheme (venv, system, or `pip install --user`), else the one on PATH."""
    explicit = os.environ.get("HLOLINT_BIN")
    if explicit:
        if not os.path.isfile(explicit):
            raise BinaryNotFound(f"HLOLINT_BIN={explicit} is not a file")
        return explicit
    candidates = [sysconfig.get_path("scripts")]
    user_scheme = {"nt": "nt_user", "posix": "posix_user"}.get(os.name)
    if user_scheme and user_scheme in sysconfig.get_scheme_names():
        candidates.append(sysconfig.get_path("scripts", scheme=user_scheme))
    # a venv's python may be a symlink to the base interpreter: its own folder still holds the scripts
    candidates.append(os.path.dirname(sys.executable))
    for folder in candidates:
        if folder:
            path = os.path.join(folder, EXE)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    found = shutil.which(EXE)
    if found:
        return found
    raise BinaryNotFound(
        "the hlolint executable was not found next to this Python "
        f"({', '.join(c for c in candidates if c)}) nor on PATH; reinstall the hlolint wheel, or set HLOLINT_BIN")

"""What the tests of the compile driver (test_driver*.py) share: the driver's path, which of jax and libtpu
are importable, running the driver, writing a module for it."""

import importlib.util
import json
import subprocess
import sys
import textwrap

import hlolint_compile as hc

DRIVER = hc.__file__
HAVE_JAX = importlib.util.find_spec("jax") is not None
HAVE_LIBTPU = importlib.util.find_spec("libtpu") is not None


def run_driver(*args, cwd=None, timeout=600):
    proc = subprocess.run([sys.executable, DRIVER, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, events, proc.stderr


def write_module(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)

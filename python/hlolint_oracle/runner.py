"""One run of a Pallas TPU kernel under jax's TPU interpreter, and what it saw (docs/oracle.md)."""

from __future__ import annotations

import dataclasses
import json
import re
import time
import traceback
from typing import Any, Callable

import jax
import numpy as np
from jax.experimental.pallas import tpu as pltpu

from . import patches

MODES = ("on_wait", "eager")


@dataclasses.dataclass
class OracleResult:
    """What the interpreter saw in one mode. `clean` when nothing below is a finding.

    - `nonzero_semaphores`: a semaphore with a count left at a kernel's exit (DMA bytes signalled and never
      waited for, in eager mode; or a signal nobody waited for);
    - `never_executed`: DMAs still pending when the kernel ended (in "on_wait" mode a DMA runs only when a wait
      needs it); zero-byte ones move nothing and are listed apart, not findings;
    - `races`: the race detector's reports;
    - `out_of_bounds`, `hang`, `error`: the run stopped (an out-of-bounds access, a wait nothing can satisfy,
      anything else)."""

    kernel: str
    mode: str
    seconds: float = 0.0
    dmas: int = 0
    nonzero_semaphores: list[dict] = dataclasses.field(default_factory=list)
    never_executed: list[dict] = dataclasses.field(default_factory=list)
    never_executed_zero_bytes: int = 0
    races: list[str] = dataclasses.field(default_factory=list)
    out_of_bounds: str | None = None
    hang: str | None = None
    error: str | None = None
    patches: list[str] = dataclasses.field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.findings()

    def findings(self) -> list[str]:
        out = []
        for s in self.nonzero_semaphores:
            out.append(f"semaphore {s['semaphore']} has count {s['count']} at the exit of pallas_call "
                       f"{s['call']} (core {s['core']})")
        for d in self.never_executed:
            size = "an unknown number of" if d["bytes"] is None else d["bytes"]
            out.append(f"DMA {d['id']} ({d['src']} -> {d['dst']}, {size} bytes) at {d['where']} never executed")
        out.extend(f"race ({n} report(s)): {site}" for site, n in self.race_sites().items())
        for kind in ("out_of_bounds", "hang", "error"):
            if getattr(self, kind):
                out.append(f"{kind.replace('_', ' ')}: {getattr(self, kind)}")
        return out

    def race_sites(self) -> dict[str, int]:
        """The races grouped by the two accesses' buffers, kinds and source frames (ranges and clocks dropped),
        with how many reports each group has."""
        sites: dict[str, int] = {}
        for message in self.races:
            accesses = [m.groups() for m in map(_ACCESS.match, message.splitlines()) if m]
            key = " vs ".join(f"{kind} of {buf} at {_short(frame)}" for kind, buf, frame in accesses) or message
            sites[key] = sites.get(key, 0) + 1
        return sites

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["clean"] = self.clean
        d["findings"] = self.findings()
        d["race_sites"] = self.race_sites()
        return d

    def __str__(self) -> str:
        head = f"{self.kernel} [{self.mode}] {self.seconds:.1f}s, {self.dmas} DMA(s): "
        return head + ("clean" if self.clean else "; ".join(self.findings()))


# one access of a race report: "  read of ('vmem', 113, 0, 0)[(...)] from 529, 0, kernel.py:550:14 (fn)"
_ACCESS = re.compile(r"^\s*(read|write) of (\(.*?\))\[.*\] from [^,]+, [^,\s]+,? (.*)$")


def _short(frame: str) -> str:
    return frame.split("site-packages/")[-1].strip()


def _cause(text: str) -> str:
    """The innermost exception line of a traceback that went through XLA's callback (the Python cause is only
    in the message text there)."""
    lines = [line.strip() for line in text.splitlines()
             if re.match(r"^\s*[A-Za-z_][\w.]*(Error|Exception|Hang): ", line)]
    return lines[-1] if lines else (text.strip().splitlines() or [""])[-1]


def _classify(exc: BaseException, result: OracleResult) -> None:
    text = _cause("".join(traceback.format_exception_only(type(exc), exc)))
    if isinstance(exc, patches.Hang) or "hlolint_oracle.patches.Hang" in text or "Hang: a semaphore wait" in text:
        result.hang = text
    elif isinstance(exc, IndexError) or re.search(r"IndexError|Out-of-bounds|out of bounds", text):
        result.out_of_bounds = text
    else:
        result.error = text


def run(kernel: str, fn: Callable[..., Any], args: tuple, *, mode: str = "on_wait", vector_clock_size: int = 64,
        hang_seconds: float = 20.0, seed: int = 0, num_devices: int = 1,
        chip: str = "TPU v6 lite") -> OracleResult:
    """Runs `fn(*args)` with every pallas_call in it interpreted: DMAs and semaphores simulated, races detected.

    `vector_clock_size`: entries of the race detector's vector clocks; each DMA gets a random entry past the
    cores', and two DMAs on one entry look ordered, so a small size misses races (fix 5 in docs/oracle.md).
    `seed` fixes that draw. `num_devices` only checks the size is enough for the devices' cores. `chip`: the
    device kind `pltpu.get_tpu_info()` answers during the run (v6e by default)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    applied = patches.install()
    params = pltpu.InterpretParams(dma_execution_mode=mode, detect_races=True,
                                   vector_clock_size=max(vector_clock_size, 2 * num_devices + 1),
                                   uninitialized_memory="nan", random_seed=seed)
    result = OracleResult(kernel=kernel, mode=mode, patches=applied)
    np.random.seed(seed)
    # the interpret parameters are read when a pallas_call is traced: a jit cache hit from another mode would
    # run that mode's program
    jax.clear_caches()
    began = time.monotonic()
    with patches.recording(hang_seconds=hang_seconds) as rec:
        try:
            with pltpu.force_tpu_interpret_mode(params), patches.simulated_chip(chip):
                jax.block_until_ready(fn(*args))
        except Exception as exc:  # every failure of the interpreted kernel is a result, not a crash
            _classify(rec.failure if rec.failure is not None else exc, result)
            pltpu.reset_tpu_interpret_mode_state()
        result.seconds = time.monotonic() - began
        result.dmas = len(rec.dmas)
        result.nonzero_semaphores = [dict(call=c, semaphore=s, core=k, count=n)
                                     for c, s, k, n in rec.nonzero_semaphores]
        for call, d in rec.never_executed:
            if d.bytes == 0:
                result.never_executed_zero_bytes += 1
            else:
                result.never_executed.append(dict(call=call, id=d.id, bytes=d.bytes, src=d.src, dst=d.dst,
                                                  where=d.where))
        result.races = list(rec.races)
    return result


def run_modes(kernel: str, make: Callable[[], tuple[Callable, tuple]], modes=MODES, **kw) -> dict[str, OracleResult]:
    """`run` once per DMA execution mode; `make()` gives (fn, args) afresh for each."""
    out = {}
    for mode in modes:
        fn, args = make()
        out[mode] = run(kernel, fn, args, mode=mode, **kw)
    return out


def to_json(results: dict[str, OracleResult]) -> str:
    return json.dumps({m: r.to_dict() for m, r in results.items()}, indent=2)

"""Small feature-detection shims so the kernels run on jax 0.10.2 and on newer jax.

Names moved between jax releases:
  - the "any" memory space: `pl.ANY` (0.10.x) / `pltpu.ANY` (some releases) / `pltpu.TPUMemorySpace.ANY` (older)
  - the TPU memory-space enum: `pltpu.MemorySpace` (0.10.x) / `pltpu.TPUMemorySpace` (older)
  - TPU interpret mode: `pltpu.InterpretParams()` (0.6+) / `interpret=True` (older, no DMA/semaphore model)
"""

from __future__ import annotations

import os

from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

_MS = getattr(pltpu, "MemorySpace", None) or getattr(pltpu, "TPUMemorySpace")


def _space(name: str):
    """A TPU memory space by name (VMEM, SMEM, HBM, ANY), whatever this jax calls it."""
    for holder in (pltpu, _MS, pl, getattr(pl, "MemorySpace", None)):
        if holder is None:
            continue
        value = getattr(holder, name, None)
        if value is not None:
            return value
    return None


ANY = _space("ANY")
VMEM = _space("VMEM")
SMEM = _space("SMEM")
# Explicit HBM is newer than ANY; fall back to ANY where the enum has no HBM.
HBM = _space("HBM") or ANY

# Module-level switch: run every pallas_call in interpret mode (CPU, for tests).
# Set from code (`fp8_matmul_2d.set_interpret(True)`) or with HLOLINT_PALLAS_INTERPRET=1.
INTERPRET = os.environ.get("HLOLINT_PALLAS_INTERPRET", "") not in ("", "0")


def set_interpret(on: bool) -> None:
    global INTERPRET
    INTERPRET = bool(on)


def interpret_arg():
    """The value for `pallas_call(interpret=...)`, read at trace time."""
    if not INTERPRET:
        return False
    params = getattr(pltpu, "InterpretParams", None)
    if params is not None:
        # DMAs run eagerly at .start(); a DMA that is never waited still lands, so the
        # interpreter does not hide the data (bugs are for the linter, not for numerics).
        try:
            return params(dma_execution_mode="eager")
        except TypeError:
            return params()
    return True


def pin(x, space):
    """Tell XLA where a pallas_call operand must live (`pltpu.with_memory_space_constraint`).

    A BlockSpec memory space only types the kernel's ref; without this constraint XLA places a
    pallas_call operand that fits in VMEM (`copy-start` to S(1) before the custom call), HBM or ANY.
    ANY is left alone on purpose: it means "XLA decides". No-op where this jax lacks the primitive.
    """
    constrain = getattr(pltpu, "with_memory_space_constraint", None)
    if constrain is None or space is None or space is ANY:
        return x
    return constrain(x, space)


def semaphore_dma(shape):
    return pltpu.SemaphoreType.DMA(shape)


def compiler_params(**kw):
    cls = getattr(pltpu, "CompilerParams", None) or getattr(pltpu, "TPUCompilerParams")
    return cls(**kw)

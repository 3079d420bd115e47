"""hlolint's dynamic oracle: Pallas TPU kernels run on CPU under jax's TPU interpreter, with DMA and semaphore
semantics and race detection, as ground truth for the static DMA analyses (docs/oracle.md).

    from hlolint_oracle import replay
    results = replay("tpuinf_ragged_paged_attention_v3", {"kv_lens": [0, 16]})
    results["eager"].clean, results["eager"].findings()

Command line: `python -m hlolint_oracle --help`.
"""

from .kernels import CASES, Case
from .mutate import Mutation
from .runner import MODES, OracleResult, run, run_modes, to_json


def replay(kernel: str, scalars: dict | None = None, *, mutation: str | None = None, modes=MODES,
           **kw) -> dict[str, OracleResult]:
    """Runs the named kernel (or its planted bug `mutation`) on inputs with `scalars` applied, in each mode."""
    case = CASES[kernel]
    kw.setdefault("vector_clock_size", case.vector_clock_size)
    kw.setdefault("num_devices", case.num_devices)
    label = kernel if mutation is None else f"{kernel}/{mutation}"
    return run_modes(label, lambda: case.make(scalars, mutation), modes=modes, **kw)


__all__ = ["CASES", "Case", "MODES", "Mutation", "OracleResult", "replay", "run", "run_modes", "to_json"]

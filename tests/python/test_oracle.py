"""The dynamic oracle (python/hlolint_oracle, docs/oracle.md): real Pallas TPU kernels run on CPU under jax's TPU
interpreter must run clean on valid inputs in both DMA execution modes, and every planted bug must show up.

The default run takes the kernels that run in a few seconds, in both modes, and one planted bug of each (~70 s
on an idle 2-core machine). The fused MoE (~30 s per run) and every other planted bug run with
HLOLINT_ORACLE_SLOW=1; `scripts/bench.py --oracle` runs them all and prints each run's time and result."""

import dataclasses
import json
import os
import re
import subprocess
import sys

import pytest

jax = pytest.importorskip("jax", reason="jax is not installed (run scripts/setup-python.sh)")
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import hlolint_oracle as oracle  # noqa: E402
from hlolint_oracle import kernels, patches, views  # noqa: E402

SLOW = os.environ.get("HLOLINT_ORACLE_SLOW") == "1"


def _needs(case):
    if case.module.startswith("tpu_inference."):
        try:
            kernels.tpu_inference_module(case.module)
        except ModuleNotFoundError as e:
            pytest.skip(f"{e} (scripts/setup-python.sh installs it)")
    if case.slow and not SLOW:
        pytest.skip("slow kernel: HLOLINT_ORACLE_SLOW=1 runs it")


PYTHON_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "python")


def _replay(kernel, mutation=None, modes=("on_wait", "eager"), **kw):
    """`oracle.replay`, or for a kernel of several devices the replay command in a process of its own: jax's
    device count is fixed when jax starts, and this one started with one."""
    case = oracle.CASES[kernel]
    if case.num_devices == 1:
        return oracle.replay(kernel, mutation=mutation, modes=modes, **kw)
    args = [sys.executable, "-m", "hlolint_oracle", kernel, "--json"] + sum((["--mode", m] for m in modes), [])
    if mutation:
        args += ["--mutation", mutation]
    if "hang_seconds" in kw:
        args += ["--hang-seconds", str(kw["hang_seconds"])]
    env = dict(os.environ, PYTHONPATH=os.path.abspath(PYTHON_DIR))
    env.pop("XLA_FLAGS", None)
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    fields = {f.name for f in dataclasses.fields(oracle.OracleResult)}
    return {m: oracle.OracleResult(**{k: v for k, v in r.items() if k in fields})
            for m, r in json.loads(done.stdout).items()}


ALL = list(oracle.CASES)
# the default run plants one bug per kernel (its first); HLOLINT_ORACLE_SLOW=1 plants every one
MUTANTS = [pytest.param(name, m, marks=[] if i == 0 else [pytest.mark.skipif(not SLOW, reason="HLOLINT_ORACLE_SLOW=1")])
           for name, case in oracle.CASES.items() for i, m in enumerate(case.mutations)]


def test_every_kernel_has_planted_bugs():
    assert {"jax_paged_attention", "jax_ragged_paged_attention", "jax_all_gather", "tpuinf_ragged_paged_attention_v3",
            "tpuinf_gmm_v2", "tpuinf_fused_moe_v1"} <= set(oracle.CASES)
    for case in oracle.CASES.values():
        assert len(case.mutations) >= 2, case.name


@pytest.mark.parametrize("kernel", ALL)
def test_unmutated_kernel_runs_clean_in_both_modes(kernel):
    case = oracle.CASES[kernel]
    _needs(case)
    results = _replay(kernel)
    for mode, result in results.items():
        assert result.dmas > 0, result
        if case.known_races and mode in case.known_races_modes:
            # docs/oracle.md: the fused MoE's true race (its output in "on_wait" mode differs from the reference:
            # the local all-to-all gather DMA reads an accumulator slot that the expert after next overwrites, and
            # it is waited for only at the end); all_gather's in "on_wait" mode, which completes two DMAs on one
            # semaphore in reverse order. Each must show, and nothing else may.
            assert result.race_sites() and not case.unexplained_race_sites(result), result.race_sites()
            assert not [f for f in result.findings() if not f.startswith("race")], result
            continue
        assert result.clean, f"{mode}: {result.findings()}"
        if kernel == "tpuinf_ragged_paged_attention_v3" and mode == "on_wait":
            # it keeps its DMA code unconditional and moves zero bytes at the ragged edges; "on_wait" leaves those
            # DMAs unexecuted, which is not a finding
            assert result.never_executed_zero_bytes > 0, result


@pytest.mark.parametrize("kernel,mutation", MUTANTS)
def test_planted_bug_is_detected(kernel, mutation):
    case = oracle.CASES[kernel]
    _needs(case)
    m = case.mutations[mutation]
    # eager mode shows every planted bug here: a DMA nobody waits for leaves its bytes on the semaphore, and it
    # runs at its start, so a read before the wait races with it
    (result,) = _replay(kernel, mutation=mutation, modes=("eager",), hang_seconds=10).values()
    shown = set()
    if result.nonzero_semaphores:
        shown.add("semaphore")
    if result.never_executed:
        shown.add("never_executed")
    if case.unexplained_race_sites(result):
        shown.add("race")
    if result.out_of_bounds:
        shown.add("out_of_bounds")
    if result.hang:
        shown.add("hang")
    assert shown & set(m.expect), f"{mutation} not detected: {result}"
    assert not result.error, result.error


def test_on_wait_mode_shows_a_missing_wait_as_never_executed_dmas():
    (result,) = oracle.replay("jax_paged_attention", mutation="paged_last_page_unwaited",
                              modes=("on_wait",)).values()
    assert result.never_executed and all(d["bytes"] > 0 for d in result.never_executed), result
    assert not result.nonzero_semaphores


def test_replay_takes_scalar_inputs():
    # a sequence of length 0 (the kernel skips it) beside one of a single page: valid inputs, clean
    (result,) = oracle.replay("jax_paged_attention", {"lengths": [0, 16]}, modes=("eager",)).values()
    assert result.clean, result
    fn, args = oracle.CASES["jax_paged_attention"].make({"lengths": [0, 16]})
    assert np.asarray(args[3]).tolist() == [0, 16]
    with pytest.raises(KeyError, match="no scalar input"):
        oracle.CASES["jax_paged_attention"].make({"kv_lens": [1]})


# ---- the fixes themselves ---------------------------------------------------------------------------------------


def test_install_applies_each_fix_the_pinned_jax_needs():
    applied = patches.install()
    if jax.__version__ == patches.TESTED_JAX:
        for name in ("views: reshape/bitcast refs", "zero-byte wait on an unsignalled semaphore",
                     "zero-length slices overlap nothing", "zero-length slices are in bounds",
                     "masked stores on refs of rank > 1"):
            assert name in applied
    from jax._src.pallas.mosaic.interpret import race_detection_state as rds
    from jax._src.pallas.mosaic.interpret import utils as iutils

    assert not rds._slices_overlap(slice(4, 4, 1), slice(0, 8, 1))
    assert rds._slices_overlap(slice(3, 5, 1), slice(4, 8, 1))
    assert iutils.clip_range_to_shape((slice(8, 8, 1),), (8,)) is not None


@pytest.mark.parametrize("src,dst", [(jnp.bfloat16, jnp.uint32), (jnp.uint32, jnp.bfloat16),
                                     (jnp.int8, jnp.int32), (jnp.float32, jnp.int32)])
def test_bitcast_view_packs_as_pltpu_bitcast(src, dst):
    from jax._src.pallas.mosaic import primitives as mosaic_primitives
    from jax._src.pallas.mosaic.interpret import utils as iutils
    from jax._src.state import types as state_types

    x = np.arange(2 * 32 * 128, dtype=np.uint32).reshape(2, 32, 128).astype(np.dtype(src))
    view, dtype = views.byte_map(x, (state_types.BitcastTransform(jnp.dtype(dst)),), iutils.to_range)
    got = views.read(x, view, dtype)
    # the primitive has a lowering (jnp ops) but no eager rule: under jit it runs on CPU
    want = np.asarray(jax.jit(lambda a: mosaic_primitives.bitcast(a, dst))(jnp.asarray(x)))
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_reshape_view_reads_writes_and_touches_only_its_rows():
    from jax._src.pallas.mosaic.interpret import utils as iutils
    from jax._src.state import indexing
    from jax._src.state import types as state_types

    buf = np.arange(4 * 8 * 16, dtype=np.float32).reshape(4, 8, 16)
    rows = indexing.NDIndexer.from_indices_shape((indexing.ds(1, 2),), (4, 8, 16))
    flat = state_types.ReshapeTransform((16, 16))
    pick = indexing.NDIndexer.from_indices_shape((indexing.ds(2, 4),), (16, 16))
    view, dtype = views.byte_map(buf, (rows, flat, pick), iutils.to_range)
    assert np.array_equal(views.read(buf, view, dtype), buf[1:3].reshape(16, 16)[2:6])
    assert views.footprint(view, buf) == (slice(1, 2, 1), slice(2, 6, 1), slice(0, 16, 1))
    views.write(buf, view, np.zeros((4, 16), np.float32))
    assert not buf[1, 2:6].any() and buf[1, 1].all() and buf[2].all()
    empty = indexing.NDIndexer.from_indices_shape((indexing.ds(5, 0),), (16, 16))
    assert views.footprint(views.byte_map(buf, (rows, flat, empty), iutils.to_range)[0], buf) is None


def test_a_wait_nothing_can_satisfy_is_a_hang_in_both_modes():
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    def kernel(x_hbm, o_ref, buf, sem):
        # waits for a DMA's bytes that no DMA will ever signal
        pltpu.make_async_copy(x_hbm, buf, sem).wait()
        o_ref[...] = buf[...]

    def f(x):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                              scratch_shapes=[pltpu.VMEM(x.shape, x.dtype), pltpu.SemaphoreType.DMA])(x)

    for mode in oracle.MODES:
        result = oracle.run("unsignalled_wait", f, (jnp.ones((8, 128), jnp.float32),), mode=mode, hang_seconds=1)
        assert result.hang and "no progress" in result.hang and not result.error, result


@pytest.mark.skipif(not SLOW, reason="HLOLINT_ORACLE_SLOW=1")
def test_a_widened_prefetch_guard_is_harmless_while_the_extra_entry_is_empty():
    # ragged paged attention v3 with its KV prefetch guard widened by one sequence: on the default inputs the
    # extra prefetch is of a table entry whose kv_len is 0, a zero-byte DMA, so nothing is wrong (the planted-bug
    # test gives that entry 16 tokens and sees it)
    case = oracle.CASES["tpuinf_ragged_paged_attention_v3"]
    _needs(case)
    (result,) = oracle.replay(case.name, {"kv_lens": [20, 33, 8, 0]}, mutation="rpa3_bkv_prefetch_unguarded",
                              modes=("eager",)).values()
    assert result.clean, result


def test_dma_balance_witness_on_jax_ragged_paged_attention_reproduces(hlolint_bin):
    # dma-balance's error on jax's ragged paged attention (fixtures/jax_pallas_ops/ragged_paged@tpu7x) names the
    # input that makes it fail; replayed under the interpreter, that input must fail the same way (a DMA signalled
    # and never waited: a semaphore non-zero at exit in eager mode), and a valid input must not
    fixture = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "jax_pallas_ops", "ragged_paged@tpu7x")
    done = subprocess.run([str(hlolint_bin), "--isolated", "--select", "MO010", "--format", "json", fixture],
                          capture_output=True, text=True, timeout=300)
    errors = [f for f in json.loads(done.stdout)["findings"] if f.get("severity") == "error"]
    assert errors, done.stdout[-2000:]
    message = errors[0]["message"]
    assert "never waited" in message and "for example with " in message, message
    # the kernel's scalar-prefetch arguments as the dump numbers them (jax's `ragged_paged_attention` signature)
    tables = {2: [0] * 8, 4: [0] * 9, 6: [0]}
    for arg, idx, value in re.findall(r"%arg(\d+)\[(\d+)\] = (-?\d+)", message.split("for example with ")[1]):
        if int(arg) in tables:
            tables[int(arg)][int(idx)] = int(value)
    num_seqs = tables[6][0]
    cu = tables[4]
    witness = {"kv_lens": tables[2], "num_seqs": num_seqs,
               "q_lens": [cu[i + 1] - cu[i] if i < num_seqs else 0 for i in range(8)]}
    (failed,) = oracle.replay("jax_pallas_ops/ragged_paged", witness, modes=("eager",), hang_seconds=20).values()
    assert failed.nonzero_semaphores and not failed.hang and not failed.error, (witness, failed)
    valid = {"q_lens": [3, 5] + [0] * 6, "kv_lens": [40, 70] + [0] * 6, "num_seqs": 2}
    (clean,) = oracle.replay("jax_pallas_ops/ragged_paged", valid, modes=("eager",), hang_seconds=20).values()
    assert clean.clean, clean


def _witness(message):
    """The table values a dma-balance witness on jax's ragged paged attention names (its Python names)."""
    tables = {"kv_lens_ref": [0] * 8, "cu_q_lens_ref": [0] * 9, "num_seqs_ref": [0]}
    for name, idx, value in re.findall(r"(\w+_ref)\[(\d+)\] = (-?\d+)", message.split("for example with ")[1]):
        if name in tables:
            tables[name][int(idx)] = int(value)
    num_seqs, cu = tables["num_seqs_ref"][0], tables["cu_q_lens_ref"]
    return {"kv_lens": tables["kv_lens_ref"], "num_seqs": num_seqs,
            "q_lens": [cu[i + 1] - cu[i] if i < num_seqs else 0 for i in range(8)]}


def test_dma_balance_under_input_assumptions_agrees_with_the_interpreter(hlolint_bin):
    # per-kernel-assume on jax's ragged paged attention: assuming every sequence has KV tokens, the error's input
    # (an empty trailing sequence) is excluded: a warning whose input still fails under the interpreter; assuming
    # at most one sequence, the engine finds an input that satisfies it and fails (no sequence at all: the first
    # block's prefetch is never waited), an error the interpreter confirms
    fixture = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "jax_pallas_ops", "ragged_paged@tpu7x")

    def findings(assumption):
        config = f"per-kernel-assume = {{'ragged_paged*' = ['{assumption}']}}"
        done = subprocess.run([str(hlolint_bin), "--isolated", "--config", config, "--select", "MO010", "--format",
                               "json", fixture], capture_output=True, text=True, timeout=300)
        return json.loads(done.stdout)["findings"]

    warned = [f for f in findings("kv_lens[*] >= 1") if f.get("verdict") == "assumed"]
    assert warned and warned[0]["severity"] == "warning", warned
    assert "`kv_lens[*] >= 1`, broken by `kv_lens_ref[1] = 0`" in warned[0]["message"], warned[0]["message"]
    witness = _witness(warned[0]["message"])
    assert min(witness["kv_lens"][:witness["num_seqs"]]) == 0, witness
    (failed,) = oracle.replay("jax_pallas_ops/ragged_paged", witness, modes=("eager",), hang_seconds=20).values()
    assert failed.nonzero_semaphores and not failed.error, (witness, failed)

    errors = [f for f in findings("num_seqs <= 1") if f["severity"] == "error"]
    assert errors, "an input the assumption allows fails"
    witness = _witness(errors[0]["message"])
    assert witness["num_seqs"] <= 1, witness
    (failed,) = oracle.replay("jax_pallas_ops/ragged_paged", witness, modes=("eager",), hang_seconds=20).values()
    assert failed.nonzero_semaphores and not failed.error, (witness, failed)


@pytest.mark.parametrize("version,races", [("bug_single_slot", True), ("bug_unwaited_dma", True), ("v2", False)])
def test_dma_race_verdicts_on_the_fp8_example_agree_with_the_interpreter(hlolint_bin, version, races):
    # dma-race (MO011) on the example's compiled kernel (fixtures/fp8_matmul_2d) against jax's race detector on
    # the same kernel: the single slot's prefetch overwrites the block being read, the unguarded prefetch is still
    # filling slot 0 when the next grid step fills and reads it; the double-buffered v2 races with nothing
    import fp8_matmul_2d as mod

    fixture = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "fp8_matmul_2d", "tpu7x+v6e",
                           f"{version}@tpu7x")
    done = subprocess.run([str(hlolint_bin), "--isolated", "--select", "MO011", "--format", "json", fixture],
                          capture_output=True, text=True, timeout=300)
    findings = json.loads(done.stdout)["findings"]
    assert not [f for f in findings if f.get("verdict") == "inconclusive"], findings
    assert bool([f for f in findings if f.get("severity") == "error"]) == races, findings
    args = mod.make_inputs(jax.random.PRNGKey(0), m=256, n=256, k=512)
    result = oracle.runner.run(version, jax.jit(mod.VERSIONS[version]), args, mode="eager", hang_seconds=30)
    assert not result.error and not result.hang, result
    assert bool(result.races) == races, result.races[:3]


def test_dma_race_on_two_pages_one_wait_agrees_with_the_interpreter(hlolint_bin, tmp_path):
    # a block copied as two pages on one semaphore, one wait for both (tests/data/pallas/two_pages.py): the
    # second page read before the wait is a race for both; rows beside the pages are not (the engine once kept
    # the two DMAs as one in flight over the first page only, and missed the race)
    module = os.path.join(os.path.dirname(__file__), "..", "data", "pallas", "two_pages.py")
    compiled = subprocess.run([str(hlolint_bin), "compile", module, "--target", "tpu7x", "--out", str(tmp_path),
                               "--python", sys.executable], capture_output=True, text=True, timeout=600)
    assert (tmp_path / "bug_second_page@tpu7x").is_dir(), compiled.stderr[-2000:]
    sys.path.insert(0, os.path.dirname(module))
    try:
        import two_pages as mod
    finally:
        sys.path.pop(0)
    for version, races in [("bug_second_page", True), ("beside_pages", False)]:
        done = subprocess.run([str(hlolint_bin), "--isolated", "--select", "MO011", "--format", "json",
                               str(tmp_path / f"{version}@tpu7x")], capture_output=True, text=True, timeout=300)
        findings = json.loads(done.stdout)["findings"]
        assert not [f for f in findings if f.get("verdict") == "inconclusive"], findings
        assert bool([f for f in findings if f.get("severity") == "error"]) == races, (version, findings)
        for mode in ("on_wait", "eager"):
            result = oracle.runner.run(version, jax.jit(mod.VERSIONS[version]), mod.make_inputs(), mode=mode,
                                       hang_seconds=30)
            assert not result.error and not result.hang, result
            assert bool(result.races) == races, (version, mode, result.races[:3])

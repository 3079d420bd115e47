"""Fixes and instruments applied to jax's TPU interpreter from outside (never by editing site-packages).

Each patch names the interpreter's behaviour it changes, why, and how it finds out whether the installed jax
still has it (docs/oracle.md lists them with what was observed). A probe that shows the bug gone leaves jax's
code alone. The instruments (recording DMAs, semaphores at exit, races, the watchdog) replace no behaviour.

`install()` is idempotent and process-wide; the recorder is reset by `recording()` around one run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
import time

import jax
import numpy as np
from jax._src.pallas.mosaic.interpret import interpret_pallas_call as ipc
from jax._src.pallas.mosaic.interpret import race_detection_state as rds
from jax._src.pallas.mosaic.interpret import shared_memory as shm
from jax._src.pallas.mosaic.interpret import utils as iutils
from jax._src.pallas.mosaic.interpret import vector_clock as vc
from jax._src.state import types as state_types

from . import views

# The jax release every patch below was written against and checked on.
TESTED_JAX = "0.10.2"


class Hang(RuntimeError):
    """A wait that no DMA or signal can satisfy: the kernel would hang on hardware."""


@dataclasses.dataclass
class DmaRecord:
    id: int
    bytes: int | None  # None: the source view's size could not be computed
    src: str
    dst: str
    where: str
    dma: object  # the interpreter's DMA, read for its state when the pallas_call ends


@dataclasses.dataclass
class Recorder:
    """What the interpreter saw during one run (possibly several pallas_calls)."""

    races: list[str] = dataclasses.field(default_factory=list)
    dmas: list[DmaRecord] = dataclasses.field(default_factory=list)
    # (pallas_call ordinal, semaphore id, global core, count) for every semaphore non-zero at a kernel's exit
    nonzero_semaphores: list[tuple[int, int, int, int]] = dataclasses.field(default_factory=list)
    # DMAs a kernel exit found not completed: (pallas_call ordinal, record)
    never_executed: list[tuple[int, DmaRecord]] = dataclasses.field(default_factory=list)
    pallas_calls: int = 0
    validations: int = 0  # kernel exits seen, one per device per pallas_call
    failure: BaseException | None = None  # the first exception an interpreter callback raised
    hang_seconds: float = 20.0
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


_recorder: Recorder | None = None
_waiting: dict[int, float] = {}  # thread id → when its current semaphore wait began
_applied: list[str] = []


def _rec() -> Recorder | None:
    return _recorder


@contextlib.contextmanager
def recording(hang_seconds: float = 20.0):
    global _recorder
    install()
    rec = Recorder(hang_seconds=hang_seconds)
    _recorder = rec
    try:
        yield rec
    finally:
        _recorder = None
        _waiting.clear()


def _where(source_info) -> str:
    if source_info is None:
        return "pallas_call"
    try:
        from jax._src import source_info_util

        where = source_info_util.summarize(source_info)
    except Exception:  # a frame that cannot be summarised is still a DMA
        return "?"
    # a kernel's file under the installed packages, named from its package down
    return where.split("site-packages/")[-1]


# ---- fix 1: reshape / bitcast views -------------------------------------------------------------------------


def _probe_views() -> bool:
    """True when `to_range` cannot take a reshape (the bug)."""
    try:
        iutils.to_range((state_types.ReshapeTransform((4,)),))
    except AttributeError:
        return True
    except Exception:
        return False
    return False


def _key(memory_space, buffer_id, device_id, local_core_id):
    space = ipc.TPU_MEMORY_SPACE_NAMES[int(memory_space)]
    return (space, int(buffer_id), int(device_id), ipc._local_core_id_or_zero_if_hbm(int(local_core_id), space)), space


def _view_access(kind, device_id, local_core_id, memory_space, buffer_id, transforms, val=None, *,
                 src_device_id=None, src_local_core_id=None, clock=None, source_info=None):
    """get/store/swap through a view: the byte map of views.py under the shared memory's lock, then the race
    detector told the box of elements touched, as the interpreter's own get/store/swap do."""
    sm = ipc._get_shared_memory()
    transforms = jax.tree.map(int, transforms)
    key, space = _key(memory_space, buffer_id, device_id, local_core_id)
    global_core = sm.get_global_core_id(int(device_id), int(local_core_id))
    with sm.lock:
        own_clock = None
        if sm.detect_races:
            vc.inc_vector_clock(sm.clocks[global_core], global_core)
            own_clock = vc.copy_vector_clock(sm.clocks[global_core])
        content = sm.mem[key].content
        try:
            view, dtype = views.byte_map(content, transforms, iutils.to_range)
        except views.ViewOutOfBounds as e:
            raise IndexError(f"Out-of-bounds {kind} of ({device_id} {local_core_id} {space} {buffer_id}) "
                             f"through a view: {e}; buffer has shape {content.shape}") from None
        old = views.read(content, view, dtype) if kind in ("get", "swap") else None
        if kind in ("store", "swap"):
            views.write(content, view, np.asarray(val, dtype=dtype))
        box = views.footprint(view, content)
    clock = clock if clock is not None else own_clock
    if sm.detect_races and box is not None:
        who = (int(src_device_id) if src_device_id is not None else int(device_id),
               int(src_local_core_id) if src_local_core_id is not None else int(local_core_id))
        check = ipc.races.check_read if kind == "get" else ipc.races.check_write
        check(*who, clock, key, box, source_info=source_info)
    return old


def _patch_views():
    orig_get, orig_store, orig_swap = ipc.get.__wrapped__, ipc.store.__wrapped__, ipc.swap.__wrapped__

    def get_raw(token, device_id, local_core_id, memory_space, buffer_id, transforms, *args, **kw):
        if not views.has_view(transforms):
            return orig_get(token, device_id, local_core_id, memory_space, buffer_id, transforms, *args, **kw)
        out = _view_access("get", device_id, local_core_id, memory_space, buffer_id, transforms,
                           src_device_id=kw.get("src_device_id"), src_local_core_id=kw.get("src_local_core_id"),
                           clock=kw.get("clock"), source_info=kw.get("source_info"))
        return token, out

    def store_raw(token, device_id, local_core_id, memory_space, buffer_id, transforms, val, *args, **kw):
        if not views.has_view(transforms):
            return orig_store(token, device_id, local_core_id, memory_space, buffer_id, transforms, val, *args,
                              **kw)
        _view_access("store", device_id, local_core_id, memory_space, buffer_id, transforms, val,
                     src_device_id=kw.get("src_device_id"), src_local_core_id=kw.get("src_local_core_id"),
                     clock=kw.get("clock"), source_info=kw.get("source_info"))
        return token

    def swap_raw(token, device_id, local_core_id, memory_space, buffer_id, transforms, val, mask, **kw):
        if not views.has_view(transforms):
            return orig_swap(token, device_id, local_core_id, memory_space, buffer_id, transforms, val, mask, **kw)
        if mask is not None:
            raise NotImplementedError("masked swap through a reshape/bitcast view")
        old = _view_access("swap", device_id, local_core_id, memory_space, buffer_id, transforms, val,
                           source_info=kw.get("source_info"))
        return token, old

    # DMAs call `get.__wrapped__`/`store.__wrapped__` (module globals, read at call time): keep that shape
    ipc.get = ipc.fail_on_exception(get_raw)
    ipc.store = ipc.fail_on_exception(store_raw)
    ipc.swap = ipc.fail_on_exception(swap_raw)


# ---- fix 2: a zero-byte wait on a semaphore nobody signalled ------------------------------------------------


class _ProbeMemory:
    detect_races = True
    num_cores = 1
    dma_execution_mode = "on_wait"

    def check_failed(self):
        pass


def _probe_zero_wait() -> bool:
    """True when waiting for 0 on a never-signalled semaphore asserts (the bug)."""
    sem = shm.Semaphore(_ProbeMemory(), 0)
    try:
        sem.wait(0, 0)
    except AssertionError:
        return True
    return False


def _patch_zero_wait():
    orig = shm.Semaphore.wait

    @functools.wraps(orig)
    def wait(self, value, global_core_id, **kw):
        # A zero-byte wait takes nothing and orders nothing: with race detection on, jax asserts the semaphore
        # has a vector clock, which only a signal gives it.
        if int(value) == 0 and self.detect_races and self.clocks[int(global_core_id)] is None:
            return
        return orig(self, value, global_core_id, **kw)

    shm.Semaphore.wait = wait


# ---- fix 3: zero-length slices ------------------------------------------------------------------------------


def _empty(s) -> bool:
    return isinstance(s, slice) and s.start is not None and s.stop is not None and s.start >= s.stop


def _probe_empty_overlap() -> bool:
    return bool(rds._slices_overlap(slice(4, 4, 1), slice(0, 8, 1)))


def _patch_empty_overlap():
    orig = rds._slices_overlap

    def slices_overlap(a, b):
        # a zero-length slice touches no element, so it overlaps nothing (jax's test is on the start alone)
        if _empty(a) or _empty(b):
            return False
        return orig(a, b)

    rds._slices_overlap = slices_overlap


def _probe_empty_clip() -> bool:
    return iutils.clip_range_to_shape((slice(8, 8, 1),), (8,)) is None


def _patch_empty_clip():
    orig = iutils.clip_range_to_shape

    def clip_range_to_shape(rnge, shape):
        # a zero-length slice starting at the end of a dimension is in bounds (it reads nothing); jax calls any
        # slice starting there "entirely out of bounds" and raises IndexError for a zero-byte DMA at a ragged edge
        if any(_empty(r) for r in rnge):
            rnge = tuple(slice(0, 0, r.step) if _empty(r) else r for r in rnge)
        return orig(rnge, shape)

    iutils.clip_range_to_shape = clip_range_to_shape


# ---- fix 4: masked stores on refs of rank > 1 -----------------------------------------------------------------


def _probe_masked_swap() -> bool:
    """True when `swap_buffer_content` builds its in-bounds mask on the first axis only (the bug): it writes
    `in_bounds_mask[in_bounds_shape[i]:] = False` for every axis i, so a masked store to an (8, 2, 128) block
    with the mask set in rows 2..7 is called out of bounds. Read from the source: no public way to call it."""
    import inspect

    return "in_bounds_mask[in_bounds_shape[i] :] = False" in inspect.getsource(shm.SharedMemory.swap_buffer_content)


def _patch_masked_swap():
    orig = shm.SharedMemory.swap_buffer_content

    def swap_buffer_content(self, key, rnge, value, mask, global_core_id, increment_clock=True, logging_info=None):
        if mask is None:
            return orig(self, key, rnge, value, mask, global_core_id, increment_clock=increment_clock,
                        logging_info=logging_info)
        clock = None
        with self.lock:
            if self.detect_races and increment_clock:
                vc.inc_vector_clock(self.clocks[global_core_id], global_core_id)
                clock = vc.copy_vector_clock(self.clocks[global_core_id])
            buff = self.mem[key]
            shape_and_dtype = shm.ShapeAndDtype(buff.logical_shape, buff.dtype)
            try:
                result = buff[rnge].copy()
            except IndexError:
                result = None
            if result is not None:
                inside = tuple(slice(0, n) for n in result.shape)
                in_bounds = np.zeros(mask.shape, dtype=bool)
                in_bounds[inside] = True
                if (~in_bounds & mask).any():
                    result = None
                else:
                    raw = result
                    result = value.copy()
                    result[inside] = np.where(mask[inside], raw, value[inside])
                    buff.set_in_bounds_portion(rnge, np.where(mask[inside], value[inside], raw))
        return result, shape_and_dtype, clock

    shm.SharedMemory.swap_buffer_content = swap_buffer_content


# ---- instruments --------------------------------------------------------------------------------------------


def _dma_bytes(dma) -> int | None:
    """The bytes a DMA moves, from its source view, computed when it starts (its buffers may be gone later)."""
    sm = ipc._get_shared_memory()
    key, _ = _key(dma.src_memory_space, dma.src_buffer_id, dma.src_device_id, dma.src_local_core_id)
    content = sm.mem[key].content
    if views.has_view(dma.src_transforms):
        view, dtype = views.byte_map(content, dma.src_transforms, iutils.to_range)
        return int(view.size)
    rnge = iutils.to_range(dma.src_transforms)
    rnge = tuple(rnge) + tuple(slice(0, d, 1) for d in content.shape[len(rnge):])
    n = 1
    for r in rnge:
        if isinstance(r, slice):
            n *= max(0, len(range(r.start or 0, r.stop, r.step or 1)))
    return n * content.dtype.itemsize


def _patch_dma_recording():
    base = ipc.DMA

    @dataclasses.dataclass
    class RecordedDMA(base):
        def __post_init__(self):
            rec = _rec()
            if rec is None:
                return
            try:
                size = _dma_bytes(self)
            except Exception:  # a size we cannot compute is reported as unknown, never hidden
                size = None
            record = DmaRecord(
                id=self.id, bytes=size,
                src=f"{ipc.TPU_MEMORY_SPACE_NAMES[self.src_memory_space]}#{self.src_buffer_id}",
                dst=f"{ipc.TPU_MEMORY_SPACE_NAMES[self.dst_memory_space]}#{self.dst_buffer_id}",
                where=_where(self.source_info), dma=self)
            with rec.lock:
                rec.dmas.append(record)

    RecordedDMA.__name__ = "DMA"
    ipc.DMA = RecordedDMA


def _patch_validate():
    def validate(token, device_id):
        # jax's `_validate` prints the first non-zero semaphore and raises nothing; record every one, and every
        # DMA of this pallas_call that never completed (in "on_wait" mode a DMA nobody waits for never runs)
        device_id = int(device_id)
        sm = ipc._get_shared_memory()
        rec = _rec()
        if rec is None:
            return token
        with rec.lock:
            # every device of the pallas_call validates once (before the clean-up barrier): the call's ordinal
            # counts whole calls, and its DMAs are judged when the last device is done (a DMA to another device
            # runs when that device waits for it, possibly after this one exits)
            ordinal = rec.validations // sm.num_devices
            rec.validations += 1
            last = rec.validations % sm.num_devices == 0
            rec.pallas_calls = ordinal + 1
            for sem, core in sm.get_sempahores_with_nonzero_count(device_id):
                rec.nonzero_semaphores.append((ordinal, int(sem.id), int(core), int(sem.count_by_core[core])))
            for record in rec.dmas if last else ():
                if getattr(record, "_seen", False):
                    continue
                record._seen = True
                if record.dma.state != ipc.DmaState.COMPLETED:
                    rec.never_executed.append((ordinal, record))
        return token

    ipc._validate = ipc.fail_on_exception(validate)


def _patch_race_messages():
    # the race detector reports by `print` (module global) and a flag reset for every pallas_call: collect the
    # messages for the whole run instead
    def collect(*args, **kw):
        rec = _rec()
        message = " ".join(str(a) for a in args)
        if rec is not None:
            with rec.lock:
                rec.races.append(message)

    rds.print = collect


def _patch_watchdog():
    orig_wait = shm.Semaphore.wait
    orig_check = shm.SharedMemory.check_failed

    @functools.wraps(orig_wait)
    def wait(self, value, global_core_id, **kw):
        me = threading.get_ident()
        _waiting[me] = time.monotonic()
        try:
            return orig_wait(self, value, global_core_id, **kw)
        finally:
            _waiting.pop(me, None)

    def check_failed(self):
        orig_check(self)
        rec = _rec()
        began = _waiting.get(threading.get_ident())
        if rec is not None and began is not None and time.monotonic() - began > rec.hang_seconds:
            raise Hang(f"a semaphore wait made no progress for {rec.hang_seconds:.0f} s: nothing outstanding can "
                       "satisfy it (on hardware the kernel hangs)")

    shm.Semaphore.wait = wait
    shm.SharedMemory.check_failed = check_failed


def _patch_failure_recording():
    # An exception in an interpreter callback reaches the caller through XLA as a `JaxRuntimeError` whose text
    # may have lost the cause (and the shared memory holding it is cleared by then): keep the first one here.
    orig = shm.SharedMemory.set_failed

    def set_failed(self, exception, *args, **kw):
        rec = _rec()
        if rec is not None:
            with rec.lock:
                if rec.failure is None:
                    rec.failure = exception
        return orig(self, exception, *args, **kw)

    shm.SharedMemory.set_failed = set_failed


# ---- the simulated chip ---------------------------------------------------------------------------------------

_chip = threading.local()


def _patch_device_kind():
    # `pltpu.get_tpu_info()` (lanes, VMEM size) asks the default device's kind: on CPU "cpu", which it rejects
    # ("Unsupported TPU device kind: cpu"). During a run, answer with the chip the run simulates.
    from jax._src.pallas.mosaic import tpu_info

    orig = tpu_info.get_device_kind

    def get_device_kind():
        kind = getattr(_chip, "kind", None)
        return kind if kind is not None else orig()

    orig_cores = tpu_info.get_num_device_cores

    def get_num_device_cores():
        # and its cores: a CPU device has no `num_cores`; the simulated chip runs one core per device (the
        # interpreter's `num_cores_or_threads` stays 1)
        return 1 if getattr(_chip, "kind", None) is not None else orig_cores()

    tpu_info.get_device_kind = get_device_kind
    tpu_info.get_num_device_cores = get_num_device_cores


@contextlib.contextmanager
def simulated_chip(kind: str | None):
    previous = getattr(_chip, "kind", None)
    _chip.kind = kind
    try:
        yield
    finally:
        _chip.kind = previous


# (name, probe or None for instruments, patch)
PATCHES = [
    ("views: reshape/bitcast refs", _probe_views, _patch_views),
    ("zero-byte wait on an unsignalled semaphore", _probe_zero_wait, _patch_zero_wait),
    ("zero-length slices overlap nothing", _probe_empty_overlap, _patch_empty_overlap),
    ("zero-length slices are in bounds", _probe_empty_clip, _patch_empty_clip),
    ("masked stores on refs of rank > 1", _probe_masked_swap, _patch_masked_swap),
    ("record DMAs", None, _patch_dma_recording),
    ("record every semaphore non-zero at exit and never-executed DMAs", None, _patch_validate),
    ("collect race reports across pallas_calls", None, _patch_race_messages),
    ("watchdog on semaphore waits", None, _patch_watchdog),
    ("record the first failure of a callback", None, _patch_failure_recording),
    ("the simulated chip's kind for pltpu.get_tpu_info", None, _patch_device_kind),
]

_install_lock = threading.Lock()


def install() -> list[str]:
    """Applies what the installed jax needs; returns the names applied (docs/oracle.md)."""
    with _install_lock:
        if _applied:
            return list(_applied)
        if jax.__version__ != TESTED_JAX:
            import warnings

            warnings.warn(f"hlolint_oracle was checked on jax {TESTED_JAX}, not {jax.__version__}: the fixes are "
                          "applied where their probes show the bug, the instruments use jax internals that may "
                          "have moved", stacklevel=2)
        for name, probe, patch in PATCHES:
            if probe is None or probe():
                patch()
                _applied.append(name)
        return list(_applied)


def applied() -> list[str]:
    return list(_applied)


__all__ = ["Hang", "Recorder", "DmaRecord", "install", "recording", "applied", "simulated_chip"]

"""Reads and writes through `ref.reshape(...)` and `ref.bitcast(...)` views in jax's TPU interpreter.

jax 0.10.2's interpreter turns a ref's transforms into one range of the underlying buffer
(`interpret_utils.to_range`), which knows only `NDIndexer`s: a `ReshapeTransform` or `BitcastTransform` raises
`AttributeError: ... has no attribute 'indices'` (docs/oracle.md, fix 1). Production kernels view their buffers
that way (ragged paged attention v3 bitcasts its bf16 buffers to uint32 and reshapes them; gmm_v2 reshapes its
output for the DMA), so none of them ran.

A view is followed here as a map from each element of the view to the bytes of the buffer it occupies: an integer
array of byte offsets with the view's shape plus one trailing axis of the view's item size. Indexers slice the
map, a reshape reshapes it (the buffer is row-major, as a VMEM or HBM ref is to the kernel), a bitcast regroups
bytes the way `pltpu.bitcast` packs: along the second-minor dimension (`jax._src.pallas.mosaic.primitives`'
lowering of `bitcast_p`, which the ref's `BitcastTransform` shape rule mirrors). Reading gathers those bytes,
writing scatters them. The race detector is told the smallest box of buffer elements the view touches: exact for
the views these kernels use (a whole buffer or a row block, reshaped), a superset otherwise (docs/oracle.md).
"""

from __future__ import annotations

import math

import numpy as np
from jax._src.state import types as state_types
from jax._src.state import indexing

VIEW_TYPES = (state_types.ReshapeTransform, state_types.BitcastTransform)


class ViewOutOfBounds(IndexError):
    """An indexer of a view reaches outside the view's shape."""


def has_view(transforms) -> bool:
    return any(isinstance(t, VIEW_TYPES) for t in transforms)


def _dim_range(idx, dim: int):
    """One entry of `interpret_utils.to_range`'s result as the list of positions it selects in a dim of `dim`."""
    if isinstance(idx, (int, np.integer)):
        if not 0 <= int(idx) < dim:
            raise ViewOutOfBounds(f"index {idx} outside a dimension of {dim}")
        return int(idx)
    start, stop, step = idx.start or 0, idx.stop, idx.step or 1
    positions = np.arange(start, stop, step)
    if positions.size and (positions[0] < 0 or positions[-1] >= dim):
        raise ViewOutOfBounds(f"slice {start}:{stop}:{step} outside a dimension of {dim}")
    return positions


def _index(view: np.ndarray, rnge) -> np.ndarray:
    """`view[rnge]` over the view's own dimensions (the trailing byte axis untouched), bounds checked."""
    dims = view.shape[:-1]
    if len(rnge) > len(dims):
        raise ViewOutOfBounds(f"{len(rnge)} indices for a view of rank {len(dims)}")
    picks = [_dim_range(r, d) for r, d in zip(rnge, dims)]
    out = view
    # one axis at a time: numpy's mixed integer/array indexing would reorder axes
    axis = 0
    for pick in picks:
        if isinstance(pick, int):
            out = np.take(out, pick, axis=axis)
        else:
            out = np.take(out, pick, axis=axis)
            axis += 1
    return out


def _bitcast(view: np.ndarray, dtype) -> np.ndarray:
    """The byte map of `view` seen as `dtype`: packing along the second-minor dimension, little-endian within an
    element (sub-element k of a wider element is its k-th group of bytes), as `pltpu.bitcast` lowers."""
    src, dst = view.shape[-1], np.dtype(dtype).itemsize
    if src == dst:
        return view
    *lead, m, n, _ = view.shape
    if src < dst:
        ratio = dst // src
        if m % ratio:
            raise ViewOutOfBounds(f"bitcast of {m} rows of {src}-byte items to {dst}-byte items")
        packed = view.reshape(*lead, m // ratio, ratio, n, src)
        packed = np.swapaxes(packed, -3, -2)  # (..., m / ratio, n, ratio, src)
        return packed.reshape(*lead, m // ratio, n, dst)
    ratio = src // dst
    split = view.reshape(*lead, m, n, ratio, dst)
    split = np.swapaxes(split, -3, -2)  # (..., m, ratio, n, dst)
    return split.reshape(*lead, m * ratio, n, dst)


def _reshape(view: np.ndarray, shape) -> np.ndarray:
    dims = view.shape[:-1]
    shape = tuple(int(s) for s in shape)
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        shape = tuple(math.prod(dims) // known if s == -1 else s for s in shape)
    return view.reshape(*shape, view.shape[-1])


def byte_map(content: np.ndarray, transforms, to_range):
    """The byte offsets into `content` of every element of the view `transforms` make, and the view's dtype.

    `to_range` is the interpreter's own (NDIndexers → one range): the indexers before the first view are applied
    as the interpreter would, so only the part of the buffer the view starts from is mapped."""
    first = next(i for i, t in enumerate(transforms) if isinstance(t, VIEW_TYPES))
    prefix = to_range(tuple(transforms[:first])) if first else ()
    prefix = tuple(prefix) + tuple(slice(0, d, 1) for d in content.shape[len(prefix):])
    itemsize = content.dtype.itemsize
    # element offsets of the prefix box, one axis per kept (sliced) dimension
    # row-major element strides: interpreter buffers are C-contiguous arrays
    strides = [math.prod(content.shape[i + 1:]) for i in range(content.ndim)]
    offsets = np.zeros((), dtype=np.int64)
    for r, d, stride in zip(prefix, content.shape, strides):
        pick = _dim_range(r, d)
        if isinstance(pick, int):
            offsets = offsets + pick * stride
        else:
            offsets = offsets[..., None] + pick.astype(np.int64) * stride
    view = offsets[..., None] * itemsize + np.arange(itemsize, dtype=np.int64)
    dtype = content.dtype
    for t in transforms[first:]:
        if isinstance(t, state_types.ReshapeTransform):
            view = _reshape(view, t.shape)
        elif isinstance(t, state_types.BitcastTransform):
            view = _bitcast(view, t.dtype)
            dtype = np.dtype(t.dtype)
        elif isinstance(t, indexing.NDIndexer):
            view = _index(view, to_range((t,)))
        else:
            raise NotImplementedError(f"view transform {type(t).__name__} in the TPU interpreter")
    return view, dtype


def footprint(view: np.ndarray, content: np.ndarray):
    """The smallest box of `content`'s elements the byte map touches, as a range; None when it touches none."""
    if view.size == 0:
        return None
    # every byte: an element of a wider view covers several buffer elements (a bitcast to uint32 of bf16 rows)
    elements = np.unique(view // content.dtype.itemsize)
    coords = np.unravel_index(elements, content.shape)
    return tuple(slice(int(c.min()), int(c.max()) + 1, 1) for c in coords)


def read(content: np.ndarray, view: np.ndarray, dtype) -> np.ndarray:
    flat = np.ascontiguousarray(content).reshape(-1).view(np.uint8)
    data = np.ascontiguousarray(flat[view])
    return data.view(dtype).reshape(view.shape[:-1])


def write(content: np.ndarray, view: np.ndarray, value: np.ndarray) -> None:
    assert content.flags.c_contiguous, "interpreter buffers are C-contiguous arrays"
    flat = content.reshape(-1).view(np.uint8)
    flat[view] = np.ascontiguousarray(value).reshape(view.shape[:-1]).view(np.uint8).reshape(view.shape)

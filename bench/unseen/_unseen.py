"""Shared by the compile modules of bench/unseen: tpu-inference's kernels through examples/tpu_inference/_loader.py
(installed wheel, none of its heavy dependencies), plus the two `tpu_inference.utils` names that some kernels import
and the loader's stand-in lacks (`TPU_HEAD_SIZE_ALIGNMENT`, `get_dtype_packing`: the wheel's own definitions, which
import torch and vLLM through that module)."""

import os
import sys

_EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
for _p in (os.path.join(_EXAMPLES, "tpu_inference"), _EXAMPLES):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import _loader  # noqa: E402

_loader._bootstrap()
_utils = sys.modules["tpu_inference.utils"]
if not hasattr(_utils, "get_dtype_packing"):
    from jax._src import dtypes

    _utils.TPU_HEAD_SIZE_ALIGNMENT = 128
    _utils.TPU_SECOND_LAST_MINOR = 8

    def get_dtype_packing(dtype):
        # values of `dtype` per 32-bit word, as tpu_inference/utils.py computes it
        return 32 // dtypes.itemsize_bits(dtype)

    _utils.get_dtype_packing = get_dtype_packing

load = _loader.load

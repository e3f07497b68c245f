"""The warp builtins: `T.shfl_xor`, `T.shfl_down`, `T.shfl_up`, `T.shfl_sync` and
`T.warp_reduce_<op>` (tilelang/language/builtin.py, reduce_op.py), as `ir.Call`s whose
value on a thread depends on the other threads of its warp (docs/semantics.md §2).

    T.shfl_xor(value, lane_mask, width=32)   ->  Call("shfl_xor", (value, lane_mask, width))
    T.warp_reduce_sum(value)                 ->  Call("warp_reduce_sum", (value,))

Which lane a shuffle reads is CUDA's rule (PTX `shfl.sync`, as `__shfl_*_sync` call it:
c = ((32 − width) << 8) | clamp, clamp 31 except for `up`, where it is 0): the lanes form
segments of `width`; a source lane past the segment's end (xor, down, sync) or before its
start (up) gives the lane its own value. TileLang passes only the full-warp mask by
default; another mask is refused by the frontend."""
from __future__ import annotations

import numpy as np

WARP = 32
FULL_MASK = 0xFFFFFFFF

# T.shfl_<kind> -> PTX shfl mode
SHUFFLES = {"shfl_xor": "bfly", "shfl_down": "down", "shfl_up": "up", "shfl_sync": "idx"}
# T.warp_reduce_<op> -> the T.reduce_* kind whose monoid combines (spec.ops.REDUCE_KINDS)
WARP_REDUCES = {"warp_reduce_sum": "sum", "warp_reduce_max": "max",
                "warp_reduce_min": "min", "warp_reduce_bitand": "bitand",
                "warp_reduce_bitor": "bitor"}
# the lane masks of tl::warp_reduce's butterfly (src/tl_templates/cuda/reduce.h), in order
BUTTERFLY = (16, 8, 4, 2, 1)
# CUDA's __shfl_*_sync names, by T. name
CUDA_NAMES = {"shfl_xor": "__shfl_xor_sync", "shfl_down": "__shfl_down_sync",
              "shfl_up": "__shfl_up_sync", "shfl_sync": "__shfl_sync"}


def is_warp_call(func: str) -> bool:
    return func in SHUFFLES or func in WARP_REDUCES


def source_lane(func: str, lane: np.ndarray, b: np.ndarray, width: int) -> np.ndarray:
    """The lane (0..31) each lane reads for T.<func>(value, b, width): PTX shfl.sync's
    rule; a lane whose source falls outside what the rule allows reads itself."""
    mode = SHUFFLES[func]
    segmask = (WARP - width) & 31
    clamp = 0 if mode == "up" else 31
    min_lane = lane & segmask
    max_lane = min_lane | (clamp & ~segmask & 31)
    b = b.astype(np.int64) & 31                 # PTX reads b[4:0]
    if mode == "bfly":
        j = lane ^ b
        valid = j <= max_lane
    elif mode == "down":
        j = lane + b
        valid = j <= max_lane
    elif mode == "up":
        j = lane - b
        valid = j >= max_lane
    else:
        j = min_lane | (b & ~segmask)
        valid = j <= max_lane
    return np.where(valid, j, lane)

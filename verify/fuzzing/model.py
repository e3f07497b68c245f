"""The generator's own oracle: a kernel description's inputs and the outputs it must
produce, computed with numpy over the description's update sites (never by our
interpreter, which is one of the things under test). A split-K description carries its
own model (verify.fuzzing.splitk)."""
from __future__ import annotations

import numpy as np

from verify_reducer.spec.dtypes import lookup

from verify_reducer.verify.fuzzing import splitk, user_ops
from verify_reducer.verify.fuzzing.expr import FLOATS, wrap
from verify_reducer.verify.fuzzing.grammar import Kernel, Reducer
from verify_reducer.verify.fuzzing.program import BLOCK_VARS, Site, input_shape, output_shape, sites, vector_shape

INT_LIMITS = {"int32": (-2 ** 31, 2 ** 31 - 1), "uint32": (0, 2 ** 32 - 1)}


def inputs(k: Kernel | splitk.SplitK) -> dict[str, np.ndarray]:
    """Every input tensor: small integers in [-magnitude, magnitude] (unsigned: from 0;
    product reducers: ±1), stored in the input's dtype."""
    if isinstance(k, splitk.SplitK):
        return splitk.inputs(k)
    rng = np.random.default_rng(k.input_seed)
    out = {}
    for n, r in enumerate(k.reducers):
        out[f"a{n}"] = _draw(rng, r, input_shape(k))
        if r.value == "gemv":
            out[f"w{n}"] = _draw(rng, r, vector_shape(k))
    return out


def _draw(rng, r: Reducer, shape) -> np.ndarray:
    unsigned = r.in_dtype == "uint32"
    if r.op == "product":
        values = np.ones(shape, np.int64) if unsigned else rng.choice([-1, 1], size=shape)
    else:
        values = rng.integers(0 if unsigned else -r.magnitude, r.magnitude + 1, size=shape)
    return values.astype(lookup(r.in_dtype).np)


def expected(k: Kernel | splitk.SplitK,
             given: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every output tensor the kernel writes, in its dtype's numpy storage."""
    if isinstance(k, splitk.SplitK):
        return splitk.expected(k, given)
    tensors = {name: np.asarray(v, dtype=np.float64) if v.dtype.kind == "f"
               else np.asarray(v, dtype=np.int64) for name, v in given.items()}
    outs = {f"o{n}": np.zeros(output_shape(k)) for n in range(len(k.reducers))}
    for b in range(k.blocks):
        coords = np.unravel_index(b, k.grid[::-1])[::-1]     # x fastest
        env = {"tensors": tensors, "results": {}, **dict(zip(BLOCK_VARS, coords))}
        for epoch in range(k.tiles if k.mode == "serial" else 1):
            env["it"] = epoch
            for n, r in enumerate(k.reducers):
                value = _epoch(k, n, env)
                env["results"][f"r{n}"] = value
                rows = slice(b * k.tiles + epoch, b * k.tiles + epoch + 1) \
                    if k.mode == "serial" else slice(b * k.rows, (b + 1) * k.rows)
                outs[f"o{n}"][rows] = value
    return {name: v.astype(lookup(k.reducers[int(name[1:])].dtype).np)
            for name, v in outs.items()}


def _epoch(k: Kernel, n: int, env: dict) -> np.ndarray:
    """Reducer n's finalized value in this block and epoch: every update loop of the
    epoch (each pipelined tile runs them all) folded into one accumulator."""
    r = k.reducers[n]
    acc = np.full(k.reducer_shape, _start(r),
                  dtype=np.float64 if r.dtype in FLOATS else np.int64)
    for ko in range(k.tiles if k.mode == "pipelined" else 1):
        env["ko"] = ko
        for s in sites(k, n):
            _site(r, s, acc, env)
            if r.dtype not in FLOATS:
                acc[...] = wrap(acc, r.dtype)
    return acc


def _site(r: Reducer, s: Site, acc: np.ndarray, env: dict) -> None:
    """One update loop's contributions folded into acc."""
    grids = np.meshgrid(*(np.arange(e) for e in s.extents), indexing="ij")
    env.update(zip(s.loop_vars, grids))
    shape = grids[0].shape
    value = np.broadcast_to(s.value.eval(env), shape)
    if r.dtype not in FLOATS:
        value = wrap(value, r.dtype)
    cell = tuple(np.broadcast_to(np.asarray(i.eval(env)), shape) for i in s.index)
    keep = np.ones(shape, bool) if s.guard is None else \
        np.broadcast_to(s.guard.eval(env), shape)
    if r.user_op is not None:
        user_ops.fold(r, acc, tuple(c[keep] for c in cell), value[keep])
    else:
        _fold(r.op, acc, tuple(c[keep] for c in cell), value[keep])


def _start(r: Reducer):
    if r.seed is not None:
        return r.seed
    if r.user_op is not None:
        return user_ops.monoid(r).identity_value
    if r.op in ("max", "min") and r.dtype in FLOATS:
        # ∓inf; float8 saturates it to ∓finite_max (docs/semantics.md §8)
        top = lookup(r.dtype).finite_max if lookup(r.dtype).saturates else np.inf
        return -top if r.op == "max" else top
    if r.op == "max":
        return INT_LIMITS[r.dtype][0]
    if r.op == "min":
        return INT_LIMITS[r.dtype][1]
    return {"product": 1, "bitand": -1}.get(r.op, 0)


def _fold(op: str, acc: np.ndarray, cells: tuple[np.ndarray, ...],
          values: np.ndarray) -> None:
    ufunc = {"sum": np.add, "product": np.multiply, "max": np.maximum, "min": np.minimum,
             "bitand": np.bitwise_and, "bitor": np.bitwise_or,
             "bitxor": np.bitwise_xor}[op]
    ufunc.at(acc, cells, values.astype(acc.dtype))


"""T.gemm in the logical interpreter (docs/semantics.md §9.1): c (+)= op(a)·op(b).

Each output c[i, j] is one sum: its old value (the seed; none when clear_accum holds)
and the K products a[i, k]·b[k, j]. A product of two float16 / bfloat16 / float8 values
has at most 22 significant bits and an exponent float64 holds, so it is formed exactly in
float64; the sum is then combined exactly and rounded once into c's dtype, with the bound
of any order of additions (interp.exact.combine, §9) — the hardware's tensor-core
accumulation and our CUDA's per-thread multiply-adds are two such orders. A product that
the accumulator dtype cannot hold (float16 × float16 into float16, a bfloat16 product
under or over float32's range) enters with the bound of its own rounding, |x − fl(x)|, so
an order that rounds each product first (a multiply then an add) is judged legal too.
Tensor cores add the other way: a block of products and the accumulator are aligned to
the largest exponent and truncated, not rounded, to about float32's precision, and the
block's sum is then rounded into C (Fasi, Higham, Mikaitis and Pranesh, "Numerical
behavior of NVIDIA tensor cores", PeerJ CS 2021). For a block of q ≥ 2 products each
step loses at most (q + 2)·2⁻²³ of the block's magnitude, so every float accumulator's
products carry 2⁻²²·(Σ|xᵢ| + |c|) more bound each: K of them exceed what K/q such steps
can lose. It also covers a float16 accumulator stepped through float32 (one extra
rounding, 2⁻²⁴, of every partial sum). int8 × int8 fits in int32 and the int32 sum wraps as any integer sum: exact in any order.

The statement is block-level: the threads compute it together, as any tile op; inside a
T.Parallel, or under an `if` on the thread index, it has no meaning (R100)."""
from __future__ import annotations

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError, error
from verify_reducer.spec.dtypes import BOOL
from verify_reducer.spec.ops import monoid

from .evaluate import operand
from .exact import combine
from .values import Lanes


def run_gemm(block, stmt: ir.Gemm, lanes: Lanes) -> None:
    """Runs stmt for the block `block` (interp.logical.Block: its storage and checks)."""
    if lanes.parallel or lanes.divergent or lanes.n != 1:
        raise DiagnosticError(error(
            "R100", "T.gemm inside a T.Parallel or under an `if` on the thread index: a "
            "gemm is a statement of the whole block (every thread takes part)", stmt.span))
    a = _matrix(block, stmt.a, stmt, lanes, stmt.transpose_a)
    b = _matrix(block, stmt.b, stmt, lanes, stmt.transpose_b)
    c = stmt.c
    dtype = c.dtype
    clear = bool(operand(stmt.clear_accum, BOOL, lanes, block).v[0])
    old = None if clear else block.readable(c, stmt.span, "T.gemm", lanes).read(
        np.arange(c.size), stmt.span)
    store = block.writable(c, stmt.span, "T.gemm", "R211", lanes)
    values, bounds = products(a, b, dtype)
    m, n, k = stmt.mnk
    flat = np.repeat(np.arange(m * n), k)
    if lanes.taint is not None and lanes.taint[0]:
        bounds = np.full(len(values), np.inf)
    result, bound, _ = combine(monoid("sum"), dtype, flat, values, bounds, m * n,
                               None if old is None else old.v,
                               None if old is None else old.b)
    if dtype.is_float:
        bound = bound + _tensor_core_slack(values, bound, old, m * n, k)
    store.write_all(result, bound)


def _matrix(block, buffer: ir.Buffer, stmt: ir.Gemm, lanes: Lanes, transpose: bool):
    """(values, bounds or None) of an operand as op(buffer): M×K for A, K×N for B."""
    val = block.readable(buffer, stmt.span, "T.gemm", lanes).read(
        np.arange(buffer.size), stmt.span)
    v = val.v.reshape(buffer.shape)
    b = None if val.b is None else val.b.reshape(buffer.shape)
    if transpose:
        v, b = v.T, (None if b is None else b.T)
    return v, b


def products(a, b, dtype) -> tuple[np.ndarray, np.ndarray | None]:
    """Every product a[i, k]·b[k, j], in (i, j, k) order, exact (float64, or int64 for
    integers), and its bound: the operands' own uncertainty spread through the product,
    plus, where the accumulator dtype cannot hold the exact product, its rounding."""
    (av, ab), (bv, bb) = a, b
    wide = np.int64 if dtype.is_int else np.float64
    x = av.astype(wide)[:, None, :]                 # i, ·, k
    y = bv.astype(wide).T[None, :, :]               # ·, j, k
    with np.errstate(all="ignore"):
        values = (x * y).reshape(-1)
    bounds = None
    if ab is not None or bb is not None:
        xa = np.abs(x.astype(np.float64))
        ya = np.abs(y.astype(np.float64))
        xb = 0.0 if ab is None else ab[:, None, :]
        yb = 0.0 if bb is None else bb.T[None, :, :]
        with np.errstate(all="ignore"):
            bounds = np.broadcast_to(xa * yb + ya * xb + xb * yb,
                                     (av.shape[0], bv.shape[1], av.shape[1])).reshape(-1)
        if dtype.is_int:
            bounds = np.where(bounds > 0, np.inf, 0.0)
    if dtype.is_float:
        with np.errstate(all="ignore"):
            held = dtype.quantize(values).astype(np.float64)
            lost = np.where(np.isfinite(values), np.abs(values - held), 0.0)
        lost = np.where(np.isnan(lost), np.inf, lost)
        if lost.any():
            bounds = lost if bounds is None else bounds + lost
    return values, bounds


def _tensor_core_slack(values, bound, old, outputs: int, k: int) -> np.ndarray:
    """Per output, K·2⁻²²·(Σ|xᵢ| + |c|) more bound: a tensor core's truncating block
    additions lose at most (q + 2)·2⁻²³·(Σ|xᵢ| + |c|) per block of q ≥ 2 products, so
    K·2⁻²² over the K/q blocks; a float16 accumulation stepped through float32 rounds
    once more (2⁻²⁴) at each of its K steps. Nothing where the sum's bound is 0: every
    order of it is exact (its terms are multiples of one power of two and their
    magnitudes sum below 2^p of it), and so is any alignment to the largest term, which
    is smaller than that sum."""
    with np.errstate(all="ignore"):
        mass = np.abs(values.astype(np.float64)).reshape(outputs, k).sum(axis=1)
        if old is not None:
            mass = mass + np.abs(old.v.astype(np.float64)) + \
                (0.0 if old.b is None else old.b)
        extra = np.where(bound > 0, np.ldexp(mass, -22) * k, 0.0)
    return np.where(np.isnan(extra), np.inf, extra)

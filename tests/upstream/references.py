"""Ground truth for every kernel of the upstream corpus (tests/upstream/*.py): plain numpy,
written from what the kernel is meant to compute (its upstream test's torch reference and
the math), never from the interpreter. The conventions are tests/references.py's, whose
helpers are reused: float reductions are exact (math.fsum over float64 values that hold
the contributions exactly); element arithmetic a kernel does in float32 before or after a
reduction (a product of two float32 values, the online-softmax rescale, rsqrt) is done in
float32 here too, on the correctly rounded reduction.

Where a kernel accumulates by hand in a fixed order (a thread's serial `C_reg[0] += ...`,
`A_local[i, j] += ...` across tiles, a butterfly), or through T.gemm or T.atomic_add, whose
order is the hardware's, the inputs are chosen on a grid where every partial sum is exact
in float32, so the reference from the math holds whatever the order. The references of
kernels refused today are checked only for their shapes (tests/test_upstream.py) until the
tool runs them; the softmax ones (online_softmax, mha_*) follow the math in float64 and
will need the kernel's float16 steps spelled out once they verify.

`REFERENCES[name]` is a `Reference(outputs, inputs)`. `inputs(rng)` gives every tensor
parameter at the header's params: the frontend cannot read most of the refused kernels
yet, so their shapes come from here, not from the tool. Low-precision values (bfloat16,
float8) are float32 arrays holding values the narrow dtype represents exactly."""
from __future__ import annotations

import math

import numpy as np

from references import Reference, f64, fsum_all, fsum_rows, int_sum, wrap

Arrays = dict[str, np.ndarray]
F32 = np.float32


# ----------------------------------------------------------------------------- helpers

def _rng_floats(rng, shape, dtype=np.float32, scale=1.0) -> np.ndarray:
    return (rng.normal(0.0, scale, size=shape)).astype(dtype)


def _grid(rng, shape, lo=-64, hi=64, step=8.0) -> np.ndarray:
    """Multiples of 1/step in [lo/step, hi/step): exact in bfloat16 and float16."""
    return (rng.integers(lo, hi, size=shape) / step).astype(np.float32)


def round_bf16(x) -> np.ndarray:
    """float32 -> bfloat16 (round to nearest even), returned as float32."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def round_e4m3(x) -> np.ndarray:
    """float -> float8_e4m3fn (round to nearest even; finite inputs within ±448, as
    every kernel here clamps before it casts), returned as float32."""
    x = np.asarray(x, np.float64)
    out = np.zeros_like(x)
    nz = x != 0
    exp = np.floor(np.log2(np.abs(x[nz])))
    exp = np.maximum(exp, -6)                      # below 2^-6: subnormal spacing 2^-9
    ulp = np.exp2(exp - 3)                         # 3 mantissa bits
    out[nz] = np.round(x[nz] / ulp) * ulp          # np.round: half to even
    return np.clip(out, -448, 448).astype(np.float32)


def _out(shape) -> np.ndarray:
    return np.zeros(shape, np.float32)


def _rowmax(a, axis=1):
    return f64(np.asarray(a, np.float32).max(axis=axis))


def _nanmax_rows(a):
    """max with NaN propagation (a row holding NaN gives NaN)."""
    a = f64(a)
    return np.where(np.isnan(a).any(axis=-1), np.nan, np.nanmax(np.where(np.isnan(a), -np.inf, a), axis=-1))


def _matvec(mat, vec):
    """mat @ vec, exact: fp16 x fp16 products are exact in float64."""
    return fsum_rows(f64(mat) * f64(vec)[None, :])


def _matmul(a, b):
    a, b = f64(a), f64(b)
    return np.array([[math.fsum(a[i] * b[:, j]) for j in range(b.shape[1])]
                     for i in range(a.shape[0])])


# ----------------------------------------------------------------------------- reducer v2 tests

def _sum_1(i):
    return {"B": fsum_all(i["A"])}


def _rows(i):
    return {"B": fsum_rows(i["A"])}


def _arange8(rng):
    return {"A": np.arange(1, 9, dtype=np.float32), "B": _out(1)}


def _online_lse(a, block):
    """The kernel's recurrence: per tile, the exact max seeded by the running max, the
    correctly rounded sum of float32 exp(a - m_new), and the float32 rescale."""
    a = np.asarray(a, np.float32)
    m, s = F32(-np.inf), F32(0.0)
    for t in range(0, a.size, block):
        tile = a[t:t + block]
        m_new = F32(max(m, tile.max()))
        e = np.exp(tile - m_new)
        total = F32(math.fsum(f64(e)))
        s = F32(np.exp(F32(m - m_new)) * s + total)
        m = m_new
    return np.array([float(F32(np.log(s)) + m)])


def _conditional(i):
    return {"B": np.array([0.0 if s < 0 else fsum_all(i["A"])[0] for s in i["S"]])}


def _conditional_inputs(rng):
    return {"A": np.arange(1, 9, dtype=np.float32), "S": np.array([-1, 1], np.int32),
            "B": _out(2)}


def _bitxor(i):
    return {"B": np.bitwise_xor.reduce(np.asarray(i["A"], np.int32), axis=1)}


# ----------------------------------------------------------------------------- reduce tests

def _default_alloc_v1(i):
    g, y = np.asarray(i["G"], F32), np.asarray(i["Y"], F32)
    r = fsum_rows(g * y).astype(F32)                # float32 products, exact sum
    return {"O": f64(g - r[:, None])}


def _partial_reduce(i):
    x = np.asarray(i["x"], F32)
    return {"out": f64(x / fsum_rows(x).astype(F32)[:, None])}


def _fp8_absmax_inputs(rng):
    base = np.linspace(-2.0, 2.0, 128).astype(np.float16).reshape(4, 32)
    base[0, 3], base[1, 17], base[2, 31], base[3, 0] = -7.0, 5.5, -3.25, 4.0
    return {"A": round_e4m3(base.astype(np.float64)), "B": np.zeros(4, np.float16)}


def _nan_rows_inputs(rng):
    a = np.tile(np.arange(128, dtype=np.float16), (128, 1))
    a[0, 7] = np.nan
    return {"A": a, "B": np.zeros(128, np.float16)}


# ----------------------------------------------------------------------------- examples

def _gemv_inputs(n=1024, k=1024):
    # multiples of 1/8 below 8: products are multiples of 1/64 below 64, and every
    # partial sum of 1024 of them is exact in float32 (at most 22 significant bits)
    def make(rng):
        return {"A": _grid(rng, k).astype(np.float16), "B": _grid(rng, (n, k)).astype(np.float16),
                "C": np.zeros(n, np.float16)}
    return make


def _gemv(i):
    return {"C": _matvec(i["B"], i["A"])}


def _rms_norm(i):
    a = np.asarray(i["A"], F32)
    n = a.shape[1]
    powsum = fsum_rows(a * a).astype(F32)           # float32 squares, exact sum
    inv = F32(1.0) / np.sqrt(powsum / F32(n) + F32(1e-12))
    return {"B": f64(a * inv[:, None])}


def _layernorm_fwd(i):
    x = np.asarray(i["X"], F32)
    d = x.shape[1]
    inv_d = F32(1.0) / F32(d)
    mean = fsum_rows(x).astype(F32) * inv_d
    rstd = F32(1.0) / np.sqrt(fsum_rows(x * x).astype(F32) * inv_d - mean * mean + F32(1e-5))
    y = (x - mean[:, None]) * rstd[:, None] * i["gamma"][None, :].astype(F32) \
        + i["beta"][None, :].astype(F32)
    return {"Y": f64(round_bf16(y)), "Mean": f64(mean), "Rstd": f64(rstd)}


def _layernorm_fwd_inputs(rng, n=64, d=512):
    return {"X": _grid(rng, (n, d)), "gamma": _grid(rng, (d,)), "beta": _grid(rng, (d,)),
            "Y": _out((n, d)), "Mean": _out(n), "Rstd": _out(n)}


def _layernorm_bwd(i):
    dy, x, g = (np.asarray(i[k], F32) for k in ("DY", "X", "gamma"))
    m, r = np.asarray(i["Mean"], F32), np.asarray(i["Rstd"], F32)
    d = x.shape[1]
    inv_d = F32(1.0) / F32(d)
    x_hat = (x - m[:, None]) * r[:, None]
    dx_hat = dy * g[None, :]
    c1 = fsum_rows(dx_hat * x_hat).astype(F32) * inv_d
    c2 = fsum_rows(dx_hat).astype(F32) * inv_d
    dx = r[:, None] * (dx_hat - c2[:, None] - x_hat * c1[:, None])
    # each block accumulates its blk_m rows in float32, in row order (a fragment's `+=`),
    # then adds its partial atomically: the partials are summed exactly here (the
    # atomics' order is free; the interpreter's bound covers it)
    dgamma = _block_partials_sum(dy * x_hat, blk_m=32)
    dbeta = _block_partials_sum(dy, blk_m=32)
    return {"DX": f64(round_bf16(dx)), "DGamma": f64(i["DGamma"]) + dgamma,
            "DBeta": f64(i["DBeta"]) + dbeta}


def _block_partials_sum(rows, blk_m):
    """Σ over blocks (exact) of each block's float32 running sum of its blk_m rows."""
    partials = []
    for start in range(0, rows.shape[0], blk_m):
        acc = np.zeros(rows.shape[1], F32)
        for row in rows[start:start + blk_m]:
            acc = acc + row.astype(F32)
        partials.append(acc)
    return np.array([math.fsum(col) for col in f64(np.stack(partials)).T])


def _layernorm_bwd_inputs(rng, n=64, d=512):
    return {"DY": _grid(rng, (n, d)), "X": _grid(rng, (n, d)), "gamma": _grid(rng, (d,)),
            "Mean": _rng_floats(rng, n, scale=0.1), "Rstd": (1 + rng.random(n)).astype(F32),
            "DX": _out((n, d)), "DGamma": _out(d), "DBeta": _out(d)}


def _softmax_rows(x):
    x = f64(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / fsum_rows(e)[:, None]


def _topk(i, k=6):
    logits = np.asarray(i["logits"], F32)
    order = np.argsort(-logits, axis=1, kind="stable")[:, :k]
    return {"topk_gates": f64(np.take_along_axis(logits, order, axis=1)),
            "topk_indices": order.astype(np.int32)}


def _topk_inputs(rng, m=320, n=128):
    # distinct values per row: the kernel and argsort agree on the order
    return {"logits": np.stack([rng.permutation(n) for _ in range(m)]).astype(F32) / 8,
            "topk_gates": _out((m, 6)), "topk_indices": np.zeros((m, 6), np.int32)}


def _cast_groups(x, group=128):
    """Per row and 128-column group: s = max(amax, 1e-4) / 448, q = e4m3(clamp(x / s))."""
    x = np.asarray(x, F32)
    rows, cols = x.shape
    q = np.zeros_like(x)
    s = np.zeros((rows, -(-cols // group)), F32)
    for g in range(s.shape[1]):
        part = x[:, g * group:(g + 1) * group]
        amax = np.maximum(np.abs(part).max(axis=1), F32(1e-4))
        s[:, g] = amax / F32(448.0)
        q[:, g * group:(g + 1) * group] = round_e4m3(np.clip(part / s[:, g:g + 1], -448, 448))
    return q, s


def _per_token_cast(i):
    q, s = _cast_groups(i["X"])
    return {"X_fp8": f64(q), "X_amax": f64(s)}


def _group_cast(i, m_max=64):
    x, sizes = np.asarray(i["X"], F32), np.asarray(i["batch_sizes"])
    bg, n = sizes.size, x.shape[1]
    q = np.zeros((bg, m_max, n), F32)
    s = np.zeros((bg, m_max, -(-n // 128)), F32)
    offset = 0
    for b in range(bg):
        rows = int(sizes[b])
        qb, sb = _cast_groups(x[offset:offset + rows])
        q[b, :rows], s[b, :rows] = qb, sb
        offset += rows
    return {"X_fp8": f64(q), "X_amax": f64(s)}


def _group_cast_inputs(rng, m=128, n=256):
    return {"X": _grid(rng, (m, n)), "batch_sizes": np.array([40, 64], np.int32),
            "X_fp8": np.zeros((2, 64, n), F32), "X_amax": np.zeros((2, 64, 2), F32)}


def _gemm_acc(i):
    return {"C": f64(i["C"]) + _matmul(i["A"], i["B"])}


def _gemm_inputs(with_c, m=256, n=256, k=256):
    def make(rng):
        # grid values: every partial sum of the K products is exact in float32
        out = {"A": _grid(rng, (m, k)).astype(np.float16), "B": _grid(rng, (k, n)).astype(np.float16)}
        out["C"] = _grid(rng, (m, n)) if with_c else np.zeros((m, n), np.float16)
        return out
    return make


def _attention(q, k, v, causal):
    """softmax(q k^T / sqrt(d)) v per (batch, head), shapes (b, s, h, d); and the log2
    of the softmax denominator plus the row max (the kernel's lse, base 2)."""
    q, k, v = f64(q), f64(k), f64(v)
    b, s, h, d = q.shape
    out = np.zeros_like(q)
    lse = np.zeros((b, h, s))
    for bi in range(b):
        for hi in range(h):
            scores = q[bi, :, hi] @ k[bi, :, hi].T / math.sqrt(d)
            if causal:
                scores = np.where(np.tril(np.ones((s, s), bool)), scores, -np.inf)
            mx = scores.max(axis=1, keepdims=True)
            e = np.exp(scores - mx)
            den = fsum_rows(e)
            out[bi, :, hi] = (e / den[:, None]) @ v[bi, :, hi]
            lse[bi, hi] = (np.log(den) + mx[:, 0]) / math.log(2)
    return out, lse


def _attention_inputs(extra, b=1, s=128, h=2, d=64):
    def make(rng):
        arrays = {n: _rng_floats(rng, (b, s, h, d), np.float16) for n in ("Q", "K", "V")}
        arrays["Output"] = np.zeros((b, s, h, d), np.float16)
        if extra:
            arrays["lse"] = _out((b, h, s))
        return arrays
    return make


def _mha_fwd(i):
    return {"Output": _attention(i["Q"], i["K"], i["V"], False)[0]}


def _mha_fwd_bhsd(i):
    """The causal forward of (b, h, s, d) tensors (seq_q = seq_kv: no past)."""
    q, k, v = (np.swapaxes(i[n], 1, 2) for n in ("Q", "K", "V"))
    return {"Output": np.swapaxes(_attention(q, k, v, True)[0], 1, 2)}


def _bhsd_inputs(b=1, h=2, s=128, d=64):
    def make(rng):
        arrays = {n: _rng_floats(rng, (b, h, s, d), np.float16) for n in ("Q", "K", "V")}
        arrays["Output"] = np.zeros((b, h, s, d), np.float16)
        return arrays
    return make


def _mha_fwd_lse(i):
    out, lse = _attention(i["Q"], i["K"], i["V"], True)
    return {"Output": out, "lse": lse}


def _bwd_preprocess(i, blk=32):
    """o * do is a float16 product (rounded to float16), added in float32 into a blk-wide
    accumulator tile by tile of the head dimension; then the tile's exact row sum."""
    o, do = np.asarray(i["O"], np.float16), np.asarray(i["dO"], np.float16)
    products = (f64(o) * f64(do)).astype(np.float16).astype(F32)
    acc = np.zeros(products.shape[:-1] + (blk,), F32)
    for t in range(0, products.shape[-1], blk):
        acc = acc + products[..., t:t + blk]
    return {"Delta": fsum_rows(acc).transpose(0, 2, 1)}


def _bwd_preprocess_inputs(rng, b=1, s=128, h=2, d=64):
    return {"O": _rng_floats(rng, (b, s, h, d), np.float16),
            "dO": _rng_floats(rng, (b, s, h, d), np.float16), "Delta": _out((b, h, s))}


def _fp8_act_quant(i, group=128):
    x = np.asarray(i["x"], F32)
    q = np.zeros_like(x)
    s = np.zeros((x.shape[0], x.shape[1] // group), F32)
    for g in range(s.shape[1]):
        part = x[:, g * group:(g + 1) * group]
        amax = np.maximum(np.abs(part).max(axis=1), F32(1e-4))
        # round_scale: the scale is 2 ** ceil(log2(amax / 448))
        s[:, g] = np.exp2(np.ceil(np.log2(f64(amax * F32(1 / 448.0))))).astype(F32)
        q[:, g * group:(g + 1) * group] = round_e4m3(np.clip(part / s[:, g:g + 1], -448, 448))
    return {"quant": f64(q), "scale": f64(s)}


def _pooling(i, block=128):
    """K * KScale stored back into float8 (index_k), the block's column sums (exact with
    these inputs), the float32 mean, and the block's float8 requantization."""
    k, ks = np.asarray(i["K"], F32), np.asarray(i["KScale"], F32)
    n, d = k.shape
    blocks = -(-n // block)
    out_k, out_s = np.zeros((blocks, d), F32), np.zeros(blocks, F32)
    for b in range(blocks):
        rows = slice(b * block, min((b + 1) * block, n))
        count = rows.stop - rows.start
        scaled = round_e4m3(k[rows] * ks[rows, None])
        mean = np.array([math.fsum(c) for c in f64(scaled).T]).astype(F32) * (F32(1.0) / F32(count))
        scale = max(F32(np.abs(mean).max() * F32(1.0 / 448.0)), F32(1e-10))
        out_k[b] = round_e4m3(mean * (F32(1.0) / scale))
        out_s[b] = scale
    return {"BlockedK": f64(out_k), "BlockedKScale": f64(out_s)}


def _hadamard(i):
    a = f64(i["A"])
    n = a.shape[1]
    idx = np.arange(n)
    h = np.array([[(-1) ** bin(r & c).count("1") for c in idx] for r in idx], np.float64)
    return {"B": a @ h}


REFERENCES: dict[str, Reference] = {
    # reducer v2 tests
    "rv2_scalar_sum_36": Reference(_sum_1, _arange8),
    "rv2_deferred_serial_tiles": Reference(_rows),
    "rv2_pipelined_accumulation": Reference(_rows),
    "rv2_multiple_update_sites": Reference(
        lambda i: {"C": fsum_all(np.concatenate([f64(i["A"]), f64(i["B"])]))}),
    "rv2_max": Reference(lambda i: {"B": _rowmax(i["A"])}),
    "rv2_seed_once": Reference(lambda i: {"B": np.array([math.fsum([100.0, *f64(i["A"])])])}),
    "rv2_int32_sum": Reference(lambda i: {"B": int_sum(i["A"], np.int32)},
                               lambda rng: {"A": wrap(rng.integers(-2**31, 2**31, 8), np.int32),
                                            "B": np.zeros(1, np.int32)}),
    "rv2_local_complete_inner_serial": Reference(_rows),
    "rv2_permuted_indices": Reference(lambda i: {"B": f64(i["A"]).T}),
    "rv2_unit_dim_indices": Reference(lambda i: {"B": fsum_rows(i["A"]).reshape(1, -1)}),
    "rv2_rowsum_fp16": Reference(_rows, lambda rng: {"A": _rng_floats(rng, (32, 64), np.float16),
                                                     "B": np.zeros(32, np.float16)}),
    "rv2_bf16_max": Reference(lambda i: {"B": _rowmax(i["A"])},
                              lambda rng: {"A": _grid(rng, (32, 64)), "B": _out(32)}),
    "rv2_bitwise_xor": Reference(_bitxor, lambda rng: {
        "A": rng.integers(0, 2**31 - 1, size=(16, 64)).astype(np.int32),
        "B": np.zeros(16, np.int32)}),
    "rv2_online_softmax_serial": Reference(lambda i: {"B": _online_lse(i["A"], 128)}),
    "rv2_epoch_pipelined_max": Reference(lambda i: {"B": np.array([float(np.max(i["A"]))])}),
    "rv2_uniform_conditional": Reference(lambda i: {"B": np.array([fsum_all(i["A"])[0], 0.0])},
                                         lambda rng: {"A": np.arange(1, 9, dtype=F32), "B": _out(2)}),
    "rv2_seed_captured": Reference(lambda i: {"B": np.array([math.fsum([5.0, *f64(i["A"])])])},
                                   _arange8),
    "rv2_conditional_refinement": Reference(_conditional, _conditional_inputs),
    "rv2_wide_publication_1d": Reference(_rows),
    # reduce tests
    "reduce_factory_shared": Reference(_rows, lambda rng: {"A": _rng_floats(rng, (32, 32)),
                                                           "B": _out(32)}),
    "reduce_clear_max": Reference(lambda i: {"B": _rowmax(i["A"])},
                                  lambda rng: {"A": _rng_floats(rng, (128, 128), np.float16),
                                               "B": np.zeros(128, np.float16)}),
    "finalize_reducer_v1": Reference(_rows, lambda rng: {"A": _rng_floats(rng, (128, 64)),
                                                         "B": _out(128)}),
    "finalize_short_extent": Reference(_sum_1, _arange8),
    "finalize_mixed_extents": Reference(
        lambda i: {"C": fsum_all(np.concatenate([f64(i["A"]), f64(i["B"])]))}),
    "finalize_epoch_pipelined_v1": Reference(lambda i: {"B": _online_lse(i["A"], 128)}),
    "finalize_default_alloc_v1": Reference(_default_alloc_v1),
    "finalize_conditional": Reference(_conditional, _conditional_inputs),
    "reduce_local_packed": Reference(_sum_1, lambda rng: {"A": _rng_floats(rng, 8, np.float16),
                                                          "B": np.zeros(1, np.float16)}),
    "reduce_local_to_var": Reference(lambda i: {"B": np.array([float(np.max(i["A"]))])},
                                     lambda rng: {"A": _rng_floats(rng, 8, np.float16),
                                                  "B": np.zeros(1, np.float16)}),
    "reduce_sm80_batch": Reference(_rows, lambda rng: {"A": _rng_floats(rng, (128, 64)),
                                                       "B": _out(128)}),
    "reduce_absmax_bf16_reshape": Reference(
        lambda i: {"B": f64(np.abs(np.asarray(i["A"], F32)).max(axis=1))},
        lambda rng: {"A": np.where(np.arange(2560)[None, :] == 512, F32(-10.0),
                                   _grid(rng, (64, 2560))).astype(F32), "B": _out(64)}),
    "reduce_sum_reshape_straddle": Reference(
        lambda i: {"B": fsum_rows(f64(i["A"]).reshape(2, 6, 32))},
        lambda rng: {"A": np.arange(1, 2 * 192 + 1, dtype=F32).reshape(2, 192), "B": _out((2, 6))}),
    "allreduce_width_max": Reference(lambda i: {"B": _rowmax(i["A"])},
                                     lambda rng: {"A": _rng_floats(rng, (4, 64)), "B": _out(4)}),
    "allreduce_dim0_scale": Reference(lambda i: {"B": fsum_rows(f64(i["A"]).T)},
                                      lambda rng: {"A": _rng_floats(rng, (32, 2)), "B": _out(2)}),
    "reduce_fp8_absmax": Reference(lambda i: {"B": f64(np.abs(f64(i["A"])).max(axis=1))},
                                   _fp8_absmax_inputs),
    "reduce_max_nan_propagate": Reference(lambda i: {"B": _nanmax_rows(i["A"])}, _nan_rows_inputs),
    "reduce_partial_thread": Reference(_partial_reduce, lambda rng: {
        "x": rng.random((4, 512)).astype(F32), "out": _out((4, 512))}),
    # other language tests
    "warp_reduce_sum": Reference(lambda i: {"x": np.full(32, fsum_all(i["x"])[0])},
                                 lambda rng: {"x": _rng_floats(rng, 32)}),
    "clamp_within_bounds": Reference(lambda i: {"B": f64(np.clip(i["A"], F32(0.25), F32(0.75)))},
                                     lambda rng: {"A": rng.random(8192).astype(F32),
                                                  "B": _out(8192)}),
    "atomic_add_3d": Reference(
        lambda i: {"B": np.array([math.fsum(v) for v in np.concatenate(
            [f64(i["B"])[None], f64(i["A"])]).reshape(5, -1).T]).reshape(64, 64)},
        lambda rng: {"A": _rng_floats(rng, (4, 64, 64)), "B": _rng_floats(rng, (64, 64))}),
    # float32: TileLang's nan_propagate switches to __hmax_nan only for a float16/bfloat16
    # accumulator (src/backend/common/op/reduce.h, use_nan_op); float32 stays max()/
    # tl::fast_max, i.e. fmaxf, which ignores the NaN
    "reduce_max_nan_1d": Reference(
        lambda i: {"out": np.array([np.nanmax(f64(i["a"]))])},
        lambda rng: {"a": np.where(np.arange(64) == 9, np.nan, _rng_floats(rng, 64)).astype(F32),
                     "out": _out(1)}),
    # examples
    "gemv_naive": Reference(_gemv, _gemv_inputs()),
    "gemv_naive_splitk": Reference(_gemv, _gemv_inputs()),
    "gemv_splitk": Reference(_gemv, _gemv_inputs()),
    "gemv_splitk_vectorized": Reference(_gemv, _gemv_inputs()),
    "gemv_splitk_vectorized_tvm": Reference(_gemv, _gemv_inputs()),
    "gemv_alloc_reducer": Reference(lambda i: {"o": _matvec(i["a"], i["x"])}, lambda rng: {
        "a": _rng_floats(rng, (1024, 1024), np.float16), "x": _rng_floats(rng, 1024, np.float16),
        "o": np.zeros(1024, np.float16)}),
    # grid values: the squares' partial sums (per tile, then per row) are exact
    "rms_norm_splitk": Reference(_rms_norm, lambda rng: {"A": _grid(rng, (1024, 1024)),
                                                         "B": _out((1024, 1024))}),
    "rms_norm": Reference(_rms_norm, lambda rng: {"A": _grid(rng, (1024, 1024)),
                                                  "B": _out((1024, 1024))}),
    "layernorm_fwd": Reference(_layernorm_fwd, _layernorm_fwd_inputs),
    "layernorm_bwd": Reference(_layernorm_bwd, _layernorm_bwd_inputs),
    "online_softmax": Reference(lambda i: {"Y": _softmax_rows(i["X"])}, lambda rng: {
        "X": _rng_floats(rng, (8, 8192), np.float16), "Y": np.zeros((8, 8192), np.float16)}),
    "topk": Reference(_topk, _topk_inputs),
    "per_token_cast_fp8": Reference(_per_token_cast, lambda rng: {
        "X": _rng_floats(rng, (64, 512)), "X_fp8": _out((64, 512)), "X_amax": _out((64, 4))}),
    "group_per_split_token_cast_fp8": Reference(_group_cast, _group_cast_inputs),
    "gemm_splitk": Reference(_gemm_acc, _gemm_inputs(True)),
    "gemm_splitk_vectorized_atomic": Reference(_gemm_acc, _gemm_inputs(True)),
    "gemm": Reference(lambda i: {"C": _matmul(i["A"], i["B"])}, _gemm_inputs(False)),
    # B is (N, K) and the gemm reads it transposed (transpose_B=True); square at the bound
    "gemm_autotune": Reference(lambda i: {"C": _matmul(i["A"], i["B"].T)}, _gemm_inputs(False)),
    "mha_fwd_bshd": Reference(_mha_fwd, _attention_inputs(False)),
    "mha_fwd_bhsd": Reference(_mha_fwd_bhsd, _bhsd_inputs()),
    "mha_bwd_preprocess": Reference(_bwd_preprocess, _bwd_preprocess_inputs),
    "mha_fwd_lse": Reference(_mha_fwd_lse, _attention_inputs(True)),
    "fp8_act_quant": Reference(_fp8_act_quant, lambda rng: {
        "x": _grid(rng, (64, 256)), "quant": _out((64, 256)), "scale": _out((64, 2))}),
    "fp8_block_mean_pooling": Reference(_pooling, lambda rng: {
        # integers up to 16 times powers of two: K * KScale is exact in float8_e4m3fn,
        # and the pooled sums are exact in float32
        "K": rng.integers(-16, 17, size=(320, 128)).astype(F32),
        "KScale": np.exp2(-rng.integers(0, 3, size=320)).astype(F32),
        "BlockedK": _out((3, 128)), "BlockedKScale": _out(3)}),
    # grid values: every butterfly's sum and difference is exact in float32
    "hadamard": Reference(_hadamard, lambda rng: {"A": _grid(rng, (8, 256)),
                                                  "B": _out((8, 256))}),
}

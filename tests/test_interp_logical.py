"""The logical interpreter on hand-built IR: reducer epochs, every monoid, T.reduce_*,
copies, control flow, the diagnostics it must raise, and the bounds it reports."""
from __future__ import annotations

from fractions import Fraction
from functools import reduce

import numpy as np
import pytest

from verify_reducer.interp.accept import within_bound
from verify_reducer.interp.logical import run
from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.dtypes import DTYPES, INT32
from verify_reducer.spec.ops import MONOIDS
from verify_reducer.spec.source import Span

# ----------------------------------------------------------------------------- builder
# A few lines of IR per test: ints become weak literals, strings loop variables, and
# every node gets a span on its own line so diagnostics can be told apart.

_line = [0]


def sp() -> Span:
    _line[0] += 1
    return Span(_line[0], 1, _line[0], 2)


def dt(name):
    return DTYPES[name]


def e(x):
    if isinstance(x, str):
        return ir.Var(x, sp())
    if isinstance(x, bool):
        return ir.Const(x, dt("bool"), sp(), weak=True)
    if isinstance(x, int):
        return ir.Const(x, INT32, sp(), weak=True)
    if isinstance(x, float):
        return ir.Const(x, dt("float32"), sp(), weak=True)
    return x


def buf(name, shape, dtype="float32", scope="global", op=None, legacy=False):
    info = ir.ReducerInfo(op, legacy, "all" if legacy else None) if op else None
    return ir.Buffer(name, tuple(shape), dt(dtype), "reducer" if op else scope, sp(), info)


def ld(b, *idx):
    return ir.Load(b, tuple(e(i) for i in idx), sp())


def binop(op, a, b, dtype="float32"):
    return ir.Binary(op, e(a), e(b), dt(dtype), sp())


def cmp(op, a, b):
    return ir.Compare(op, e(a), e(b), sp())


def call(fn, *args, dtype="float32"):
    return ir.Call(fn, tuple(e(a) for a in args), dt(dtype), sp())


def alloc(b):
    return ir.Alloc(b, sp())


def store(b, idx, value):
    return ir.Store(b, tuple(e(i) for i in idx), e(value), sp())


def par(names, extents, *body):
    return ir.ParallelFor(tuple(ir.Var(n, sp()) for n in names), tuple(extents), body, sp())


def loop(name, stop, *body, start=0, step=1):
    return ir.SerialFor(ir.Var(name, sp()), e(start), e(stop), step, "serial", body, sp())


def when(cond, then, orelse=()):
    return ir.If(cond, tuple(then), tuple(orelse), sp())


def region(b, starts, extents):
    return ir.Region(b, tuple(e(s) for s in starts), tuple(extents), sp())


def copy(src, dst, src_at=None, dst_at=None, extents=None):
    extents = extents or (src.shape if src_at is None else dst.shape)
    return ir.Copy(region(src, src_at or [0] * len(src.shape), extents),
                   region(dst, dst_at or [0] * len(dst.shape), extents), sp())


def init(r, seed=None, form="reducer_init", fill=None):
    return ir.ReducerInit(r, None if seed is None else e(seed), form, sp(),
                          None if fill is None else e(fill))


def update(r, idx, value, form="reducer_update", form_op=None):
    return ir.ReducerUpdate(r, tuple(e(i) for i in idx), e(value), form,
                            form_op or r.reducer.op, sp())


def fin(r, dst=None):
    return ir.ReducerFinalize(r, dst, None, sp())


def func(params, *body, grid=(1,), threads=128):
    block_vars = tuple(ir.Var(n, sp()) for n in ("bx", "by", "bz")[:len(grid)])
    kernel = ir.Kernel(tuple(grid), threads, block_vars, tuple(body), sp())
    return ir.PrimFunc("main", tuple(params), kernel, sp())


def codes(excinfo):
    return [d.code for d in excinfo.value.diagnostics]


# ----------------------------------------------------------------------------- the RFC


def rfc_minimal(legacy: bool):
    x, out = buf("x", (8,)), buf("out", (1,))
    frag = buf("x_frag", (8,), scope="fragment")
    total = buf("total", (1,), op="sum", legacy=legacy)
    result = buf("result", (1,), scope="fragment")
    if legacy:
        tail = [fin(total), copy(total, out)]
        start = init(total, form="fill", fill=0.0)
    else:
        tail = [alloc(result), fin(total, result), copy(result, out)]
        start = init(total)
    return func([x, out], alloc(frag), copy(x, frag), alloc(total), start,
                par("j", [8], update(total, [0], ld(frag, "j"), form="+=" if legacy
                                     else "reducer_update")), *tail)


@pytest.mark.parametrize("legacy", [True, False])
def test_rfc_minimal_example_gives_36(legacy):
    x = np.arange(1, 9, dtype=np.float32)
    res = run(rfc_minimal(legacy), {"x": x, "out": np.zeros(1, np.float32)})
    assert res.outputs["out"].tolist() == [36.0]
    assert res.outputs["x"].tolist() == x.tolist()
    assert len(res.epochs) == 1 and res.epochs[0].counts.tolist() == [8]
    assert res.epochs[0].reducer == "total" and res.epochs[0].block == (0,)
    # 1..8 are small integers: every partial sum of every order is exact (bound 0)
    assert res.bounds["out"].tolist() == [0.0]
    assert within_bound(np.float32([36.0]), res.outputs["out"], res.bounds["out"]).all()
    assert not within_bound(np.float32([576.0]), res.outputs["out"], res.bounds["out"]).any()


def test_inputs_are_not_modified():
    x = np.arange(1, 9, dtype=np.float32)
    out = np.full(1, 7, np.float32)
    run(rfc_minimal(False), {"x": x, "out": out})
    assert out.tolist() == [7.0]


# ----------------------------------------------------------------------------- epochs


def test_several_epochs_in_a_serial_loop_each_start_from_identity():
    x, out = buf("x", (3, 4)), buf("out", (3,))
    acc, res = buf("acc", (1,), op="sum"), buf("res", (1,), scope="fragment")
    f = func([x, out], alloc(acc), alloc(res),
             loop("t", 3, init(acc),
                  par("j", [4], update(acc, [0], ld(x, "t", "j"))),
                  fin(acc, res), store(out, ["t"], ld(res, 0))))
    xs = np.arange(12, dtype=np.float32).reshape(3, 4)
    r = run(f, {"x": xs, "out": np.zeros(3, np.float32)})
    assert r.outputs["out"].tolist() == xs.sum(1).tolist()
    assert [ep.counts.tolist() for ep in r.epochs] == [[4]] * 3


def test_seed_is_combined_once():
    x, out, cnt = buf("x", (8,)), buf("out", (1,)), buf("n", (1,), "int32")
    acc, total = buf("acc", (1,), op="sum"), buf("total", (1,), "int32", op="sum")
    f = func([x, out, cnt], alloc(acc), alloc(total), init(acc, 1.5), init(total, 100),
             par("j", [8], update(acc, [0], ld(x, "j")), update(total, [0], 1)),
             fin(acc), fin(total), copy(acc, out), copy(total, cnt))
    r = run(f, {"x": np.arange(1, 9, dtype=np.float32), "out": np.zeros(1, np.float32),
                "n": np.zeros(1, np.int32)})
    assert r.outputs["out"].tolist() == [37.5]
    assert r.outputs["n"].tolist() == [108]
    assert r.bounds["n"].tolist() == [0.0]
    assert [ep.counts.tolist() for ep in r.epochs] == [[8], [8]]


def test_minus_equals_is_a_sum_of_negated_values():
    x, out = buf("x", (4,), "int32"), buf("out", (1,), "int32")
    acc = buf("acc", (1,), "int32", op="sum", legacy=True)
    neg = ir.Unary("neg", ld(x, "j"), dt("int32"), sp())
    f = func([x, out], alloc(acc), init(acc, form="clear", fill=0),
             par("j", [4], update(acc, [0], neg, form="-=", form_op="sum")),
             fin(acc), copy(acc, out))
    r = run(f, {"x": np.array([1, 2, 3, 4], np.int32), "out": np.zeros(1, np.int32)})
    assert r.outputs["out"].tolist() == [-10]


def test_two_dimensional_reducer():
    x, out = buf("x", (2, 3, 5)), buf("out", (2, 3))
    acc = buf("acc", (2, 3), op="sum")
    res = buf("res", (2, 3), scope="shared")
    f = func([x, out], alloc(acc), alloc(res), init(acc),
             par("ijk", [2, 3, 5], update(acc, ["i", "j"], ld(x, "i", "j", "k"))),
             fin(acc, res), copy(res, out))
    xs = np.random.default_rng(0).integers(-8, 8, (2, 3, 5)).astype(np.float32)
    r = run(f, {"x": xs, "out": np.zeros((2, 3), np.float32)})
    assert r.outputs["out"].tolist() == xs.sum(2).tolist()
    assert (r.epochs[0].counts == 5).all()


def test_predicated_updates_count_only_enabled_contributions():
    x, out = buf("x", (8,)), buf("out", (1,))
    acc = buf("acc", (1,), op="sum")
    f = func([x, out], alloc(acc), init(acc),
             par("j", [8], when(cmp(">", ld(x, "j"), 0.0), [update(acc, [0], ld(x, "j"))])),
             fin(acc), copy(acc, out))
    xs = np.array([1, -2, 3, -4, 5, -6, 7, -8], np.float32)
    r = run(f, {"x": xs, "out": np.zeros(1, np.float32)})
    assert r.outputs["out"].tolist() == [16.0]
    assert r.epochs[0].counts.tolist() == [4]


def test_serial_loop_inside_parallel_with_lane_dependent_trip_count():
    out = buf("out", (4,), "int32")
    acc = buf("acc", (4,), "int32", op="sum")
    f = func([out], alloc(acc), init(acc),
             par("i", [4], loop("k", "i", update(acc, ["i"], ir.Var("k", sp())))),
             fin(acc), copy(acc, out))
    r = run(f, {"out": np.zeros(4, np.int32)})
    assert r.outputs["out"].tolist() == [0, 0, 1, 3]
    assert r.epochs[0].counts.tolist() == [0, 1, 2, 3]


def test_every_block_runs_with_its_own_reducer():
    x, out = buf("x", (3, 4)), buf("out", (3,))
    acc = buf("acc", (1,), op="max")
    f = func([x, out], alloc(acc), init(acc),
             par("j", [4], update(acc, [0], ld(x, "bx", "j"))),
             fin(acc), copy(acc, out, dst_at=["bx"], extents=(1,)), grid=(3,))
    xs = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)
    r = run(f, {"x": xs, "out": np.zeros(3, np.float32)})
    assert r.outputs["out"].tolist() == xs.max(1).tolist()
    assert [ep.block for ep in r.epochs] == [(0,), (1,), (2,)]
    assert r.bounds["out"].tolist() == [0, 0, 0]


# ----------------------------------------------------------------------------- monoids


def _reference(op: str, dtype, values: list, seed):
    """The meaning, from scratch: Python integers wrapped mod 2^bits, exact Fractions."""
    items = [seed] + values
    if dtype.is_int:
        fn = {"sum": lambda a, b: a + b, "product": lambda a, b: a * b, "max": max,
              "min": min, "bitand": lambda a, b: a & b, "bitor": lambda a, b: a | b,
              "bitxor": lambda a, b: a ^ b}[op]
        return _wrap(reduce(fn, map(int, items)), dtype)
    if op in ("max", "min"):
        return (max if op == "max" else min)(items)
    exact = reduce((lambda a, b: a + b) if op == "sum" else (lambda a, b: a * b),
                   map(Fraction, map(float, items)))
    return round_fraction(exact, dtype)


def _wrap(v: int, dtype) -> int:
    v &= (1 << dtype.bits) - 1
    if dtype.kind == "int" and v >= 1 << (dtype.bits - 1):
        v -= 1 << dtype.bits
    return v


_TOP_ULP = {"float16": 2.0 ** 5, "bfloat16": 2.0 ** 120, "float32": 2.0 ** 104,
            "float64": 2.0 ** 971}


def round_fraction(q: Fraction, dtype) -> float:
    """The value of dtype nearest to q, ties to even, by exact comparison of candidates."""
    top = float(dtype.finite_max)
    if abs(q) >= Fraction(top) + Fraction(_TOP_ULP[dtype.name]) / 2:
        return float(np.copysign(np.inf, float(q)))
    guess = float(dtype.quantize(np.array([float(q)]))[0])
    guess = float(np.clip(guess, -top, top))
    with np.errstate(over="ignore"):
        ulp = float(np.spacing(np.float32(abs(guess)))) * 2.0 ** 16 \
            if dtype.name == "bfloat16" else float(np.spacing(dtype.np.type(abs(guess))))
    cands = [c for c in {guess, guess + ulp, guess - ulp, guess + ulp / 2, guess - ulp / 2}
             if np.isfinite(c) and float(dtype.quantize(np.array([c]))[0]) == c]
    return min(cands, key=lambda c: (abs(Fraction(c) - q), _odd(c, dtype)))


def _odd(x: float, dtype) -> int:
    if dtype.name == "bfloat16":
        return int(np.array([x], np.float32).view(np.uint32)[0] >> 16) & 1
    return int(np.array([x], dtype.np).view(f"u{dtype.np.itemsize}")[0]) & 1


CASES = [(op, d) for op in MONOIDS for d in
         ("int8", "uint8", "int32", "uint32", "int64", "float16", "bfloat16", "float32",
          "float64") if MONOIDS[op].supports(DTYPES[d])]


@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_every_monoid_and_dtype_matches_the_exact_reference(op, dtype):
    d = dt(dtype)
    rng = np.random.default_rng(7)
    if d.is_float:
        lo, hi = (0.5, 1.5) if op == "product" else (-100, 100)
        xs = d.quantize(rng.uniform(lo, hi, 12).astype(d.np if d.name != "bfloat16"
                                                     else np.float32))
        seed = 0.75
    else:
        big = 100 if d.bits == 8 else 10 ** 6   # big enough that sums and products wrap
        xs = d.quantize(rng.integers(0 if d.kind == "uint" else -big, big, 12))
        seed = 3
    x, out = buf("x", (12,), dtype), buf("out", (2,), dtype)
    acc = buf("acc", (2,), dtype, op=op)
    f = func([x, out], alloc(acc), init(acc, ir.Const(seed, d, sp())),
             par("j", [12], update(acc, [binop("%", "j", 2, "int32")], ld(x, "j"))),
             fin(acc), copy(acc, out))
    r = run(f, {"x": xs, "out": np.zeros(2, d.np)})
    seed_q = d.quantize(np.array([seed]))[0].item()
    for o in range(2):
        want = _reference(op, d, xs[o::2].tolist(), seed_q)
        got = r.outputs["out"][o]
        assert got == want, (op, dtype, o, got, want)
    if not d.is_float or op in ("max", "min"):
        assert (r.bounds["out"] == 0).all()


def test_integer_sum_wraps_around():
    x, out = buf("x", (3,), "int8"), buf("out", (1,), "int8")
    acc = buf("acc", (1,), "int8", op="sum")
    f = func([x, out], alloc(acc), init(acc),
             par("j", [3], update(acc, [0], ld(x, "j"))), fin(acc), copy(acc, out))
    r = run(f, {"x": np.array([100, 100, 100], np.int8), "out": np.zeros(1, np.int8)})
    assert r.outputs["out"].tolist() == [44]          # 300 − 256


def test_empty_epoch_yields_the_identity():
    out = buf("out", (1,))
    acc = buf("acc", (1,), op="max")
    f = func([out], alloc(acc), init(acc), fin(acc), copy(acc, out))
    assert run(f, {"out": np.zeros(1, np.float32)}).outputs["out"].tolist() == [-np.inf]


def test_legacy_fill_of_an_idempotent_reducer_is_a_seed():
    x, out = buf("x", (4,)), buf("out", (1,))
    acc = buf("acc", (1,), op="max", legacy=True)
    f = func([x, out], alloc(acc), init(acc, form="fill", fill=0.0),
             par("j", [4], update(acc, [0], ld(x, "j"))), fin(acc), copy(acc, out))
    r = run(f, {"x": -np.arange(1, 5, dtype=np.float32), "out": np.zeros(1, np.float32)})
    assert r.outputs["out"].tolist() == [0.0]


# ----------------------------------------------------------------------------- T.reduce_*


@pytest.mark.parametrize("kind,dim,clear", [
    ("sum", 1, True), ("sum", -1, False), ("sum", 0, True), ("max", 1, True),
    ("min", 0, False), ("abssum", 1, True), ("absmax", -1, False)])
def test_reduce_kinds(kind, dim, clear):
    x, out = buf("x", (3, 4)), buf("out", (4,) if dim == 0 else (3,))
    src = buf("src", (3, 4), scope="fragment")
    dst = buf("dst", out.shape, scope="fragment")
    f = func([x, out], alloc(src), alloc(dst), copy(x, src), copy(out, dst),
             ir.Reduce(kind, src, dst, dim, clear, sp()), copy(dst, out))
    xs = np.random.default_rng(2).integers(-9, 9, (3, 4)).astype(np.float32)
    prev = np.full(out.shape, 2.0, np.float32)
    r = run(f, {"x": xs, "out": prev})
    vals = np.abs(xs) if kind.startswith("abs") else xs
    fn = {"sum": np.sum, "abssum": np.sum, "max": np.max, "absmax": np.max, "min": np.min}[kind]
    want = fn(vals, axis=dim)
    if not clear:
        want = {"sum": want + prev, "max": np.maximum(want, prev),
                "min": np.minimum(want, prev)}[kind.replace("abs", "") if kind != "abssum"
                                               else "sum"]
    assert r.outputs["out"].tolist() == want.tolist()


def test_reduce_bitwise_on_integers():
    x, out = buf("x", (2, 3), "uint8"), buf("out", (2,), "uint8")
    src, dst = buf("src", (2, 3), "uint8", "fragment"), buf("dst", (2,), "uint8", "fragment")
    results = {}
    for kind in ("bitand", "bitor", "bitxor"):
        f = func([x, out], alloc(src), alloc(dst), copy(x, src),
                 ir.Reduce(kind, src, dst, 1, True, sp()), copy(dst, out))
        xs = np.array([[0b1100, 0b1010, 0b1110], [1, 2, 4]], np.uint8)
        results[kind] = run(f, {"x": xs, "out": np.zeros(2, np.uint8)}).outputs["out"].tolist()
    assert results == {"bitand": [0b1000, 0], "bitor": [0b1110, 7], "bitxor": [0b1000, 7]}


# ----------------------------------------------------------------------------- copies


def test_copy_tail_tile_reads_zero_and_writes_only_inside():
    a, out = buf("a", (10,)), buf("out", (10,))
    frag = buf("frag", (4,), scope="fragment")
    f = func([a, out], alloc(frag), copy(a, frag, src_at=[8]), copy(frag, out, dst_at=[8],
                                                                      extents=(4,)))
    xs = np.arange(10, dtype=np.float32) + 1
    r = run(f, {"a": xs, "out": np.full(10, -1, np.float32)})
    assert r.outputs["out"].tolist() == [-1] * 8 + [9, 10]


def test_copy_two_dimensional_offset_region_into_a_row():
    a, out = buf("a", (4, 6)), buf("out", (3,))
    row = buf("row", (3,), scope="shared")
    f = func([a, out], alloc(row),
             ir.Copy(region(a, [2, 1], (1, 3)), region(row, [0], (3,)), sp()),
             copy(row, out))
    xs = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert run(f, {"a": xs, "out": np.zeros(3, np.float32)}).outputs["out"].tolist() \
        == [13, 14, 15]


def test_copy_converts_dtypes():
    a, out = buf("a", (3,), "float32"), buf("out", (3,), "float16")
    f = func([a, out], copy(a, out))
    r = run(f, {"a": np.array([1 / 3, 2.0, 70000.0], np.float32),
                "out": np.zeros(3, np.float16)})
    assert r.outputs["out"].tolist() == np.array([1 / 3, 2.0, np.inf], np.float16).tolist()


# ----------------------------------------------------------------------------- expressions


def test_integer_division_truncates_floor_ops_floor():
    out = buf("out", (3, 4), "int32")
    a = np.array([7, -7, 7, -7])
    b = np.array([2, 2, -2, -2])
    body = []
    for k in range(4):
        for row, op in enumerate(("/", "//", "%")):
            body.append(store(out, [row, k], binop(op, int(a[k]), int(b[k]), "int32")))
    r = run(func([out], *body), {"out": np.zeros((3, 4), np.int32)})
    assert r.outputs["out"].tolist() == [[3, -3, -3, 3], [3, -4, -4, 3], [1, 1, -1, -1]]


def test_guarded_load_in_if_then_else_is_not_evaluated_when_not_taken():
    x, out = buf("x", (5,)), buf("out", (8,))
    sel = ir.Select(cmp("<", "j", 5), ld(x, "j"), e(0.0), dt("float32"), sp())
    f = func([x, out], par("j", [8], store(out, ["j"], sel)))
    r = run(f, {"x": np.arange(5, dtype=np.float32) + 1, "out": np.zeros(8, np.float32)})
    assert r.outputs["out"].tolist() == [1, 2, 3, 4, 5, 0, 0, 0]


def test_float16_arithmetic_rounds_in_float16():
    out = buf("out", (1,), "float16")
    f = func([out], store(out, [0], binop("+", ir.Const(2048.0, dt("float16"), sp()),
                                          ir.Const(1.0, dt("float16"), sp()), "float16")))
    assert run(f, {"out": np.zeros(1, np.float16)}).outputs["out"].tolist() == [2048.0]


def test_max_min_ignore_nan_like_cuda():
    x, out = buf("x", (2,)), buf("out", (2,))
    f = func([x, out], store(out, [0], call("max", ld(x, 0), ld(x, 1))),
             store(out, [1], call("min", ld(x, 1), ld(x, 0))))
    r = run(f, {"x": np.array([np.nan, 3.0], np.float32), "out": np.zeros(2, np.float32)})
    assert r.outputs["out"].tolist() == [3.0, 3.0]


# ----------------------------------------------------------------------------- bounds


def test_exact_elementwise_arithmetic_has_zero_bound_and_library_calls_a_few_ulps():
    x, out = buf("x", (4,)), buf("out", (4,))
    f = func([x, out], par("j", [4], store(out, ["j"], binop("*", ld(x, "j"), 3.0))),
             store(out, [3], call("exp", ld(x, 3))))
    r = run(f, {"x": np.float32([1, 2, 3, 0.5]), "out": np.zeros(4, np.float32)})
    assert r.bounds["out"][:3].tolist() == [0, 0, 0]
    ulp = float(np.spacing(np.float32(np.exp(0.5))))
    assert 0 < r.bounds["out"][3] <= 4 * ulp


def test_bounds_propagate_through_later_arithmetic():
    x, out = buf("x", (64,)), buf("out", (2,))
    acc, s = buf("acc", (1,), op="sum"), buf("s", (1,), scope="fragment")
    f = func([x, out], alloc(acc), alloc(s), init(acc),
             par("j", [64], update(acc, [0], ld(x, "j"))), fin(acc, s),
             store(out, [0], binop("*", ld(s, 0), 2.0)),
             store(out, [1], call("exp", binop("*", ld(s, 0), 0.01))))
    xs = np.random.default_rng(3).normal(size=64).astype(np.float32)
    r = run(f, {"x": xs, "out": np.zeros(2, np.float32)})
    assert (r.bounds["out"] > 0).all() and np.isfinite(r.bounds["out"]).all()


def test_float32_sums_in_any_order_stay_within_the_bound():
    """A backend emulation: the same contributions summed in float32 in random orders
    and as a butterfly tree; every result must be accepted, a wrong one must not."""
    n = 300
    x, out = buf("x", (n,)), buf("out", (1,))
    acc = buf("acc", (1,), op="sum")
    f = func([x, out], alloc(acc), init(acc, 0.25),
             par("j", [n], update(acc, [0], ld(x, "j"))), fin(acc), copy(acc, out))
    rng = np.random.default_rng(4)
    xs = (rng.normal(size=n) * np.exp(rng.uniform(-8, 8, n))).astype(np.float32)
    r = run(f, {"x": xs, "out": np.zeros(1, np.float32)})
    items = np.append(xs, np.float32(0.25))
    for trial in range(20):
        order = rng.permutation(items)
        total = np.float32(0)
        for v in order:
            total = np.float32(total + v)
        assert within_bound(np.float32([total]), r.outputs["out"], r.bounds["out"]).all()
    tree = np.concatenate([items, np.zeros(512 - len(items), np.float32)])
    while len(tree) > 1:
        tree = (tree[::2] + tree[1::2]).astype(np.float32)
    assert within_bound(tree, r.outputs["out"], r.bounds["out"]).all()
    wrong = r.outputs["out"] + np.float32(2 * r.bounds["out"][0] + 1e-3)
    assert not within_bound(wrong, r.outputs["out"], r.bounds["out"]).any()


def test_uncertain_comparison_makes_integer_results_unjudgeable():
    x, out, idx = buf("x", (8,)), buf("out", (1,)), buf("flag", (1,), "int32")
    acc, s = buf("acc", (1,), op="sum"), buf("s", (1,), scope="local")
    cond = cmp(">", ld(s, 0), 0.0)
    sel = ir.Select(cond, e(1), e(0), INT32, sp())
    f = func([x, out, idx], alloc(acc), alloc(s), init(acc),
             par("j", [8], update(acc, [0], ld(x, "j"))), fin(acc, s),
             store(idx, [0], sel), copy(s, out))
    xs = np.float32([1e8, 1, -1e8, 0, 0, 0, 0, 0])
    r = run(f, {"x": xs, "out": np.zeros(1, np.float32), "flag": np.zeros(1, np.int32)})
    assert r.outputs["flag"].tolist() == [1]
    assert r.bounds["flag"].tolist() == [np.inf]


# ----------------------------------------------------------------------------- diagnostics


def _raises(f, inputs):
    with pytest.raises(DiagnosticError) as info:
        run(f, inputs)
    return info


def test_uninitialized_fragment_read_is_R502_naming_buffer_and_index():
    out = buf("out", (4,))
    frag = buf("frag", (4,), scope="fragment")
    bad = store(out, ["j"], ld(frag, "j"))
    f = func([out], alloc(frag), store(frag, [0], 1.0), par("j", [4], bad))
    info = _raises(f, {"out": np.zeros(4, np.float32)})
    d = info.value.diagnostics[0]
    assert d.code == "R502" and "frag[1]" in d.message
    assert d.notes[0].span == bad.span


def _reducer_program(*body, op="sum"):
    out = buf("out", (1,))
    acc = buf("acc", (1,), op=op)
    return func([out], alloc(acc), *[s(acc, out) for s in body]), {"out": np.zeros(1,
                                                                               np.float32)}


@pytest.mark.parametrize("steps,code", [
    ([lambda a, o: init(a), lambda a, o: store(o, [0], ld(a, 0)), lambda a, o: fin(a)],
     "R200"),
    ([lambda a, o: init(a), lambda a, o: fin(a), lambda a, o: update(a, [0], 1.0)], "R201"),
    ([lambda a, o: init(a), lambda a, o: update(a, [0], 1.0)], "R202"),
    ([lambda a, o: init(a), lambda a, o: fin(a), lambda a, o: fin(a)], "R203"),
    ([lambda a, o: update(a, [0], 1.0)], "R204"),
    ([lambda a, o: init(a), lambda a, o: store(a, [0], 1.0), lambda a, o: fin(a)], "R205"),
    ([lambda a, o: init(a), lambda a, o: update(a, [0], 1.0, form="store-max",
                                                 form_op="max"), lambda a, o: fin(a)], "R206"),
    ([lambda a, o: init(a), lambda a, o: update(a, [1], 1.0), lambda a, o: fin(a)], "R209"),
    ([lambda a, o: init(a, form="fill", fill=1.0), lambda a, o: fin(a)], "R213"),
])
def test_reducer_misuse_is_refused(steps, code):
    f, inputs = _reducer_program(*steps)
    assert codes(_raises(f, inputs)) == [code]


def test_finalize_destination_mismatch_is_R214():
    out = buf("out", (2,))
    acc = buf("acc", (1,), op="sum")
    f = func([out], alloc(acc), init(acc), fin(acc, out))
    assert codes(_raises(f, {"out": np.zeros(2, np.float32)})) == ["R214"]


def test_finalize_inside_parallel_is_R207():
    out = buf("out", (1,))
    acc = buf("acc", (1,), op="sum")
    f = func([out], alloc(acc), init(acc), par("j", [2], when(cmp("==", "j", 0), [fin(acc)])))
    assert codes(_raises(f, {"out": np.zeros(1, np.float32)})) == ["R207"]


def test_out_of_bounds_store_and_parallel_race_are_R102():
    out = buf("out", (4,))
    oob = func([out], par("j", [5], store(out, ["j"], 1.0)))
    assert codes(_raises(oob, {"out": np.zeros(4, np.float32)})) == ["R102"]
    race = func([out], par("j", [4], store(out, [0], ir.Cast(ir.Var("j", sp()),
                                                            dt("float32"), sp()))))
    info = _raises(race, {"out": np.zeros(4, np.float32)})
    assert codes(info) == ["R102"] and "race" in info.value.diagnostics[0].message
    same = func([out], par("j", [4], store(out, [0], 1.0)))      # same value: no race
    assert run(same, {"out": np.zeros(4, np.float32)}).outputs["out"][0] == 1.0


def test_an_if_on_the_thread_index_runs_its_branch_once():
    # TileLang #2881's shape: one thread stores the finalized total (36, not 36 × 1)
    x, out = buf("x", (8,)), buf("out", (2,))
    acc = buf("acc", (1,), op="sum", legacy=True)
    cnt = buf("cnt", (1,), op="sum")
    tx = ir.ThreadBinding(sp())
    f = func([x, out], alloc(acc), alloc(cnt), init(acc, form="fill", fill=0.0), init(cnt),
             par("j", [8], update(acc, [0], ld(x, "j"))), fin(acc),
             when(cmp("<", tx, 64), [store(out, [0], ld(acc, 0)), update(cnt, [0], 1.0)]),
             ir.Let(ir.Var("t", sp()), ir.ThreadBinding(sp()), sp()),
             when(cmp("==", "t", 5), [], [fin(cnt)]))
    info = _raises(f, {"x": np.arange(1, 9, dtype=np.float32), "out": np.zeros(2, np.float32)})
    assert codes(info) == ["R207"]          # the finalize under `if t != 5` diverges
    f = func([x, out], alloc(acc), init(acc, form="fill", fill=0.0),
             par("j", [8], update(acc, [0], ld(x, "j"))), fin(acc),
             when(cmp("==", tx, 0), [store(out, [0], ld(acc, 0))]))
    r = run(f, {"x": np.arange(1, 9, dtype=np.float32), "out": np.zeros(2, np.float32)})
    assert r.outputs["out"].tolist() == [36.0, 0.0]


def test_a_statement_reading_the_thread_index_runs_once_per_thread():
    out = buf("out", (256,), "int32")
    tx = ir.ThreadBinding(sp())
    f = func([out], ir.WarpGroup((1,), (store(out, [tx], tx),), sp()), threads=256)
    r = run(f, {"out": np.zeros(256, np.int32)})
    assert r.outputs["out"].tolist() == [0] * 128 + list(range(128, 256))


def test_init_and_finalize_must_share_their_scope():
    x, out = buf("x", (4,)), buf("out", (1,))
    acc, res = buf("acc", (1,), op="sum"), buf("res", (1,), scope="fragment")
    body = (init(acc), par("j", [4], update(acc, [0], ld(x, "j"))))
    ws = func([x, out], alloc(acc), alloc(res), ir.WarpGroup((0,), body, sp()), fin(acc, res),
              threads=256)
    assert codes(_raises(ws, {"x": np.ones(4, np.float32), "out": np.zeros(1, np.float32)})) \
        == ["R208"]
    inside = func([x, out], alloc(acc), alloc(res),
                  par("j", [4], init(acc), update(acc, [0], ld(x, "j")), fin(acc, res)))
    assert codes(_raises(inside, {"x": np.ones(4, np.float32),
                                  "out": np.zeros(1, np.float32)})) == ["R207"]


def test_copying_an_unfinalized_reducer_is_R211():
    out = buf("out", (1,))
    acc = buf("acc", (1,), op="sum")
    f = func([out], alloc(acc), init(acc), copy(acc, out), fin(acc))
    assert codes(_raises(f, {"out": np.zeros(1, np.float32)})) == ["R211"]


def test_missing_input_is_reported():
    f, _ = _reducer_program(lambda a, o: init(a), lambda a, o: fin(a))
    assert codes(_raises(f, {})) == ["R102"]

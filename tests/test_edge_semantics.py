"""Conversion, comparison and min/max edges against an independent ground truth.

The expected values are computed here in plain Python integers and `fractions`, from
the rules of docs/semantics.md §8 as the H200 showed them
(docs/gpu-runs/2026-12-03-edge-semantics.log) — never by calling the code under test:

- float → integer: truncate toward zero; clamp to the 32-bit range of the same
  signedness for 8/16/32-bit targets and to the 64-bit range for 64-bit ones (±inf
  too); then keep the low bits. NaN: 0 from float16/bfloat16/float32 into a ≤32-bit
  integer, else the bit pattern 100…0 of the 32- or 64-bit conversion, wrapped;
- integer → float: one rounding to nearest even (16-bit floats: through float32;
  bfloat16 then truncated, as cutlass's bfloat16_t(int) does on the H200);
- float64 → float16/bfloat16: through float32 (TileLang's half_t(float(x)));
- NaN stays NaN; max/min ignore NaN and order -0 < +0.
"""
from __future__ import annotations

import math
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.spec.dtypes import DTYPES
from verify_reducer.spec.ops import MONOIDS
from verify_reducer.verify.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "programs" / "valid"

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
MAGNITUDES = [0.5, -0.5, 1.5, -1.5, 127.5, 128.0, -129.0, 255.5, 256.0, 32768.0, -32769.0,
              65535.5, 65536.0, 2.0 ** 31, -(2.0 ** 31) - 1, 3e9, -3e9, 2.0 ** 32,
              2.0 ** 63, -(2.0 ** 63), 1.5e19, 1e19, -1e19, 2.0 ** 64, 2.0 ** 64 + 8192,
              1e30, -1e30, math.inf, -math.inf, math.nan, -0.0, 65504.0, 70000.0]


# ----------------------------------------------------------------------------- truth

def _int_range(signed: bool, bits: int) -> tuple[int, int]:
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def _wrap(value: int, signed: bool, bits: int) -> int:
    value %= 1 << bits
    return value - (1 << bits) if signed and value >= 1 << (bits - 1) else value


def truth_float_to_int(x: float, source_bits: int, name: str) -> int:
    signed, bits = name.startswith("int"), int(name.lstrip("uint"))
    width = 64 if bits == 64 else 32
    if math.isnan(x):
        if width == 32 and source_bits < 64:
            return 0
        return _wrap(1 << (width - 1), signed, bits)
    lo, hi = _int_range(signed, width)
    value = lo if x == -math.inf else hi if x == math.inf else math.trunc(x)
    return _wrap(min(max(value, lo), hi), signed, bits)


def round_fraction(q: Fraction, precision: int, min_exp: int, max_finite: Fraction) -> float:
    """q rounded to nearest even on a binary grid of `precision` significant bits whose
    least exponent is min_exp (subnormals); ±inf past the overflow threshold."""
    if q == 0:
        return 0.0
    sign, q = (-1.0 if q < 0 else 1.0), abs(q)
    exp = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** exp > q:
        exp -= 1
    ulp = Fraction(2) ** max(exp - precision + 1, min_exp)
    units, rest = divmod(q, ulp)
    if rest > ulp / 2 or (rest == ulp / 2 and units % 2 == 1):
        units += 1
    value = units * ulp
    top = max_finite + Fraction(2) ** (max_finite.numerator.bit_length()
                                       - max_finite.denominator.bit_length()
                                       - precision) / 2
    if value >= top or value > max_finite:
        return sign * math.inf
    return sign * float(value)


FORMATS = {  # precision, least exponent of an ulp, largest finite value
    "float16": (11, -24, Fraction(65504)),
    "bfloat16": (8, -133, Fraction(0xFF, 1) * Fraction(2) ** 120),
    "float32": (24, -149, Fraction((1 << 24) - 1) * Fraction(2) ** 104),
    "float64": (53, -1074, Fraction((1 << 53) - 1) * Fraction(2) ** 971),
}


def truth_to_float(value, name: str) -> float:
    """An exact value (int or float) converted to a float dtype; 16-bit floats from
    anything but float32 go through float32 first, and an integer into bfloat16 keeps
    float32's upper 16 bits (toward zero: cutlass's bfloat16_t(int))."""
    if isinstance(value, int) and name == "bfloat16":
        wide = Fraction(round_fraction(Fraction(value), *FORMATS["float32"]))
        if wide == 0:
            return 0.0
        sign, mag = (-1 if wide < 0 else 1), abs(wide)
        exp = mag.numerator.bit_length() - mag.denominator.bit_length()
        if Fraction(2) ** exp > mag:
            exp -= 1
        ulp = Fraction(2) ** (exp - 7)                  # 8 significant bits
        return sign * float((mag // ulp) * ulp)
    if isinstance(value, float) and math.isnan(value):
        return math.nan
    if isinstance(value, float) and (math.isinf(value) or value == 0):
        return value                                # ±inf and ±0 keep their sign
    q = Fraction(value)
    if name in ("float16", "bfloat16"):
        wide = round_fraction(q, *FORMATS["float32"])
        if math.isinf(wide) or wide == 0:
            return wide
        q = Fraction(wide)
    return round_fraction(q, *FORMATS[name])


def same_float(a: float, b: float) -> bool:
    """Equal, NaN equal to NaN, and the sign of zero counted."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


# ----------------------------------------------------------------------------- casts

@pytest.mark.parametrize("target", INTS)
@pytest.mark.parametrize("source", ["float32", "float64", "float16", "bfloat16"])
def test_float_to_int_at_every_magnitude(source, target):
    src = DTYPES[source]
    xs = src.quantize(np.array(MAGNITUDES))
    got = DTYPES[target].quantize(xs)
    bits = 64 if source == "float64" else 32
    for x, g in zip(xs.tolist(), got.tolist()):
        assert int(g) == truth_float_to_int(float(x), bits, target), (source, x, target)


def test_the_issue_cases():
    # in range, and once wrongly 2**63 / INT64_MIN / 0 / -1294967296
    assert int(DTYPES["uint64"].quantize(np.array([1.5e19]))[0]) == 15000000000000000000
    assert int(DTYPES["int64"].quantize(np.array([1e19]))[0]) == 2 ** 63 - 1
    assert int(DTYPES["int32"].quantize(np.array([2.0 ** 64 + 8192]))[0]) == 2 ** 31 - 1
    assert int(DTYPES["int32"].quantize(np.array([3e9], dtype=np.float32))[0]) == 2 ** 31 - 1
    assert int(DTYPES["int32"].quantize(np.array([math.nan], dtype=np.float32))[0]) == 0
    assert int(DTYPES["int32"].quantize(np.array([math.nan]))[0]) == -2 ** 31
    assert int(DTYPES["uint64"].quantize(np.array([math.nan], dtype=np.float32))[0]) == 2 ** 63
    # narrow integers keep the low bits of the 32-bit conversion
    assert int(DTYPES["int8"].quantize(np.array([300.0]))[0]) == 44
    assert int(DTYPES["int16"].quantize(np.array([65504.0]))[0]) == -32
    assert int(DTYPES["uint8"].quantize(np.array([-1.5]))[0]) == 0


INTEGERS = [0, 1, -1, 2 ** 24 + 1, 2 ** 31 - 1, -2 ** 31, 2 ** 53 + 1, 2 ** 62 + 2 ** 54 + 1,
            2 ** 63 - 1, -2 ** 63, -(2 ** 63 - 2 ** 39 - 1), 2 ** 30 + 2 ** 22 + 1, 65519,
            65520, -65520, 0x7FFFFF7FFFFFFFFF]
UNSIGNED = [2 ** 63, 2 ** 63 + 2 ** 39 + 1, 2 ** 64 - 1, 0xFFFFFF7FFFFFFFFF,
            0xFFFFFF8000000000, 2 ** 32 - 1]


@pytest.mark.parametrize("target", ["float16", "bfloat16", "float32", "float64"])
def test_int64_and_uint64_to_float_round_once_to_nearest_even(target):
    for values, source in ((INTEGERS, "int64"), (UNSIGNED, "uint64")):
        arr = np.array(values, dtype=DTYPES[source].np)
        got = DTYPES[target].quantize(arr).astype(np.float64).tolist()
        for v, g in zip(values, got):
            assert same_float(g, truth_to_float(v, target)), (source, v, target, g)


@pytest.mark.parametrize("target", ["float16", "bfloat16", "float32"])
def test_float64_to_narrower_floats(target):
    values = [1 + 2 ** -8 + 2 ** -40, 1 + 2 ** -11 + 2 ** -50, 1 + 2 ** -24 + 2 ** -60,
              3.5e38, 65519.99, 65520.0, 1e-50, -1e-50, 2 ** -149 * 0.75, 2 ** -133 * 1.5,
              -0.0, math.inf, -math.inf]
    got = DTYPES[target].quantize(np.array(values)).astype(np.float64).tolist()
    for v, g in zip(values, got):
        assert same_float(g, truth_to_float(v, target)), (v, target, g)


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


@pytest.mark.parametrize("target", ["bfloat16", "float16"])
def test_nan_payloads_stay_nan(target):
    payloads = [0x7F800001, 0xFF800001, 0x7F80FFFF, 0x7FC00000, 0x7F810000, 0xFFC00001]
    x = np.array(payloads, dtype=np.uint32).view(np.float32)
    got = DTYPES[target].quantize(x)
    assert np.isnan(got.astype(np.float64)).all()
    # the canonical NaN CUDA's __float2bfloat16 / __float2half give: 0x7FFF
    stored = got.view(np.uint32) >> 16 if target == "bfloat16" else got.view(np.uint16)
    assert set(stored.tolist()) == {0x7FFF}
    # and the neighbours of the NaNs still round as numbers
    assert DTYPES["bfloat16"].quantize(np.array([_f32(0x7F7FFFFF)]))[0] == math.inf
    assert DTYPES["bfloat16"].quantize(np.array([_f32(0x3F818000)]))[0] == 1.015625


# ----------------------------------------------------------------------------- max / min

ZERO_PAIRS = [(-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0), (0.0, 0.0), (math.nan, -0.0),
              (0.0, math.nan), (math.nan, math.nan), (-1.0, -0.0), (1.0, 0.0)]


def truth_max(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == b == 0:
        return 0.0 if not (math.copysign(1, a) < 0 and math.copysign(1, b) < 0) else -0.0
    return max(a, b)


def truth_min(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == b == 0:
        return -0.0 if (math.copysign(1, a) < 0 or math.copysign(1, b) < 0) else 0.0
    return min(a, b)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_max_min_signed_zeros_and_nan(dtype):
    d = DTYPES[dtype]
    a = d.quantize(np.array([p[0] for p in ZERO_PAIRS]))
    b = d.quantize(np.array([p[1] for p in ZERO_PAIRS]))
    for name, truth in (("max", truth_max), ("min", truth_min)):
        got = MONOIDS[name].combine(d, a, b).astype(np.float64).tolist()
        for (x, y), g in zip(ZERO_PAIRS, got):
            assert same_float(g, truth(x, y)), (dtype, name, x, y, g)


def test_max_reducer_over_signed_zeros_in_any_order():
    m = MONOIDS["max"]
    terms = np.array([[-0.0, 0.0, -0.0], [-0.0, -0.0, -1.0], [0.0, -0.0, -5.0]])
    got = m.float_ufunc.reduce(terms, axis=1).tolist()
    assert [math.copysign(1, g) for g in got] == [1, -1, 1]
    acc = np.full(2, -math.inf)
    m.float_ufunc.at(acc, np.array([0, 0, 1]), np.array([-0.0, 0.0, -0.0]))
    assert [math.copysign(1, g) for g in acc] == [1, -1]


# ----------------------------------------------------------------------------- programs

def _check(capsys, path: Path):
    code = main(["check", str(path)])
    out, err = capsys.readouterr()
    return code, out + err


EDGE_PROGRAMS = sorted(PROGRAMS.glob("edge_*.py"))


def same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal element by element, NaN equal to NaN and -0 unequal to +0."""
    g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    return all(same_float(a, b) for a, b in zip(g.tolist(), w.tolist())) if \
        got.dtype.kind == "f" else np.array_equal(got.ravel(), want.ravel())


def test_edge_programs_exist():
    assert len(EDGE_PROGRAMS) >= 8


@pytest.mark.parametrize("path", EDGE_PROGRAMS, ids=[p.stem for p in EDGE_PROGRAMS])
def test_edge_program_results_exact(capsys, path):
    """`check` verifies each program, and the interpreter's outputs equal the header's
    ground truth exactly (tests/test_programs.py allows the error bound; here every
    value is exact, the sign of zero included)."""
    from verify_reducer.verify.oracle import pipeline
    from verify_reducer.verify.oracle.expect import parse_expectation
    code, text = _check(capsys, path)
    assert code == 0, text
    expected = parse_expectation(path.read_text(), str(path))
    report = pipeline.check(str(path), given=expected.inputs, blocks="all")
    assert expected.results
    for name, want in expected.results.items():
        got = report.reference.outputs[name]
        want = np.asarray(want).reshape(got.shape).astype(got.dtype)
        assert same_bits(got, want), (name, got.tolist(), want.tolist())


# ----------------------------------------------------------------------------- frontend

_COMPARE_NEGATIVE = '''
import tilelang.language as T


@T.prim_func
def main(u: T.Tensor((8,), T.uint32), out: T.Tensor((1,), T.int32)):
    with T.Kernel(1, threads=32) as bx:
        r = T.alloc_reducer((1,), T.int32, op="sum")
        T.reducer_init(r)
        for j in T.Parallel(8):
            if u[j] > -1:
                T.reducer_update(r[0], 1)
        f = T.alloc_fragment((1,), T.int32)
        T.finalize_reducer(r, f)
        T.copy(f, out)
'''


def test_unsigned_compared_with_a_negative_constant_is_refused(tmp_path, capsys):
    # C says `u > -1` is false (-1 becomes 4294967295), the folded truth says true, and
    # TileLang refuses to build it: R102 rather than either answer
    path = tmp_path / "u_gt_minus_one.py"
    path.write_text(_COMPARE_NEGATIVE)
    code, text = _check(capsys, path)
    assert code == 1 and "R102" in text and "4294967295" in text


@pytest.mark.parametrize("expr, shown", [("T.cast(T.float32(3e9), T.int32)", "3000000000"),
                                         ("T.int8(T.float32(300.0))", "300"),
                                         ("T.cast(T.float64(-1.0), T.uint32)", "-1")])
def test_constant_casts_out_of_range_are_refused_as_tilelang_refuses(tmp_path, capsys,
                                                                     expr, shown):
    source = _COMPARE_NEGATIVE.replace("if u[j] > -1:", f"if T.cast({expr}, T.int64) > 0:")
    path = tmp_path / "const_cast.py"
    path.write_text(source)
    code, text = _check(capsys, path)
    assert code == 1 and "R102" in text and shown in text


def test_a_bfloat16_input_nan_with_a_low_payload_stays_nan_end_to_end():
    # float32 bits 0x7F800001 given for a bfloat16 tensor: masking the low 16 bits once
    # made it +inf (int32 2147483647); it is NaN (int32 0, int64 -2**63), as on the GPU
    from verify_reducer.verify.oracle import pipeline
    path = PROGRAMS / "edge_cast_bfloat16_to_int.py"
    n = 11
    x = np.full(n, 1.0, dtype=np.float32)
    x[0] = _f32(0x7F800001)
    x[1] = _f32(0xFF80FFFF)
    report = pipeline.check(str(path), given={"x": x, "w": np.zeros(n, np.float32)},
                            blocks="all")
    out = report.reference.outputs
    assert out["o_int32"][:3].tolist() == [0, 0, 1]
    assert out["o_int64"][:3].tolist() == [-2 ** 63, -2 ** 63, 1]


@pytest.mark.parametrize("op", ["max", "min"])
def test_float_max_min_on_z3_floats_are_a_commutative_monoid_with_signed_zeros(op):
    # the op table's Z3 meaning of float max/min agrees with the numpy one on the zeros
    # and is commutative bit for bit (SMT equality tells -0 from +0)
    import z3
    m, f32 = MONOIDS[op], DTYPES["float32"]
    sort = z3.Float32()
    a, b, c = (z3.FP(n, sort) for n in "abc")
    f = lambda x, y: m.z3_combine(f32, x, y)  # noqa: E731
    for claim in (f(a, b) == f(b, a), f(f(a, b), c) == f(a, f(b, c))):
        solver = z3.Solver()
        solver.set("timeout", 20000)
        solver.add(z3.Not(claim))
        assert solver.check() == z3.unsat
    plus, minus = z3.FPVal(0.0, sort), z3.fpNeg(z3.FPVal(0.0, sort))
    got = z3.simplify(f(minus, plus))
    assert z3.is_true(z3.simplify(z3.fpIsNegative(got))) == (op == "min")

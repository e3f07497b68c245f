"""Semantic probes: small generated TileLang programs on the edges where a reference can
be silently wrong — float → int casts at every magnitude, float → float8 conversions at
their ties and past their range, NaN payloads in bf16/f16,
signed zeros in max/min, mixed-signedness comparisons, int64/uint64 → float,
overflowing and long low-precision sums — each with a ground truth computed here,
independently of the tool, from the hardware's rules with Python integers and
fractions (never numpy's casts, which are the thing under test).

RULES is the one table of those rules; a probe names the rule its truth comes from, so a
rule refined after GPU experiments changes in one place.

A probe runs as one campaign job (verify.fuzzing.mangle_run.Job): `run --backend interp`
and `check` (plus `run --backend sim` for exact probes, and `compare` of a wrong and a
right output for sums), all on the probe's own inputs (.npz: NaN payloads and exact
64-bit integers need bits, not literals). judge() reads the JSON documents:
- *silently wrong*: a command says ok / verified / match (exit 0) and an output differs
  from the truth, or `check` says verified while an element was left unchecked, or
  `compare` matches an output that is far from the truth;
- *false alarm*: a mismatch (exit 3) where the output is the truth;
- *refused*: the tool rejected the program or its inputs (exit 1 or 2): not wrong, but
  the edge went unprobed;
- *inconclusive* (exit 5) is an honest answer."""
from __future__ import annotations

import io
import json
import math
import random
import struct
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from verify_reducer.verify.fuzzing.mangle_run import Job, Outcome, run_jobs

# ----------------------------------------------------------------------------- the rules

# (significand bits with the implicit one, least normal exponent, greatest exponent)
FLOATS = {"float16": (11, -14, 15), "bfloat16": (8, -126, 127), "float32": (24, -126, 127),
          "float64": (53, -1022, 1023)}
INTS = {f"{sign}int{bits}": (sign == "", bits) for sign in ("", "u") for bits in (8, 16, 32, 64)}


def int_range(dtype: str) -> tuple[int, int]:
    signed, bits = INTS[dtype]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def round_float(value: Fraction, dtype: str) -> float:
    """The exact value rounded to nearest, ties to even, in a float dtype (subnormals
    kept; past the largest finite value, infinity)."""
    if value == 0:
        return 0.0
    p, emin, emax = FLOATS[dtype]
    a = abs(value)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    rounded = round(a / quantum) * quantum            # Fraction rounds half to even
    largest = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    result = math.inf if rounded > largest else float(rounded)
    return -result if value < 0 else result


def wrap(value: int, dtype: str) -> int:
    """An exact integer kept to dtype's width in two's complement."""
    signed, bits = INTS[dtype]
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >> (bits - 1) else value


# float -> int as the H200 computes TileLang's CUDA (cvt.rzi, measured under CUDA 13.0 by
# the engineer who set the interpreter's rule): a conversion goes to at least 32 bits
# (CUDA converts through int / unsigned int), truncates toward zero, saturates to that
# width's range of the target's signedness, and keeps the target's low bits; NaN gives
# 0 where a 16/32-bit float goes to <= 32 bits, else the pattern 100…0 of the width.
CONVERT_WIDTH_MIN = 32


def float_to_int(value: float, dtype: str, source: str = "float64") -> int:
    """Truncate toward zero, saturate to the conversion's range, keep the target's bits;
    NaN -> 0 or 100…0 (CONVERT_WIDTH_MIN above)."""
    signed, bits = INTS[dtype]
    width = max(bits, CONVERT_WIDTH_MIN)
    if math.isnan(value):
        if width == 32 and FLOATS[source][0] < 53:
            return 0
        return wrap(1 << (width - 1), dtype)
    lo, hi = int_range(f"{'' if signed else 'u'}int{width}")
    if math.isinf(value):
        return wrap(hi if value > 0 else lo, dtype)
    return wrap(min(hi, max(lo, int(value))), dtype)   # int() of a float truncates, exactly


def truncate_float(value: float, dtype: str) -> float:
    """A finite float cut toward zero to dtype's precision (its low bits dropped)."""
    if value == 0 or not math.isfinite(value):
        return value
    p, emin, _ = FLOATS[dtype]
    a = Fraction(abs(value))
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    cut = float(math.floor(a / quantum) * quantum)
    return -cut if value < 0 else cut


# int -> bfloat16 as the H200 computes cutlass's bfloat16_t(int), which TileLang prints
# (docs/semantics.md §8, measured: 65519 -> 65280): float32 to nearest, then truncated
INT_TO_BFLOAT16_TRUNCATES = True


def int_to_float(value: int, dtype: str) -> float:
    """An integer converted to a float dtype: the exact value rounded to nearest even;
    into float16/bfloat16 through float32 first (TileLang prints half_t(x) and
    bfloat16_t(x), which convert a float), then to nearest in float16 and toward zero
    in bfloat16 (INT_TO_BFLOAT16_TRUNCATES)."""
    if FLOATS[dtype][0] >= 24:
        return round_float(Fraction(value), dtype)
    wide = round_float(Fraction(value), "float32")
    if dtype == "bfloat16" and INT_TO_BFLOAT16_TRUNCATES:
        return truncate_float(wide, dtype)
    return round_float(Fraction(wide), dtype)


# Mixed signedness as TVM types it before C sees the operands (docs/semantics.md §8, the
# H200 run of 2026-12-03): the wider operand's type, the unsigned one at equal width —
# not C's usual conversions, which would first promote int8/uint8 to int.
def compare_type(a: str, b: str) -> str:
    (sa, ba), (sb, bb) = INTS[a], INTS[b]
    if ba != bb:
        return a if ba > bb else b
    return a if not sa else b


def compare(op: str, a: int, a_type: str, b: int, b_type: str | None) -> bool | None:
    """a OP b in their common type. b_type None: b is an untyped literal, which adopts
    a's type: if a's type cannot hold it, the result is the same for every a (exact),
    except a negative literal against an unsigned a, which has no answer (None: TileLang
    refuses to make an unsigned constant from a negative value)."""
    if b_type is None:
        lo, hi = int_range(a_type)
        if b < 0 and not INTS[a_type][0]:
            return None
        common = a_type if lo <= b <= hi else None
    else:
        common = compare_type(a_type, b_type)
    if common is not None and not INTS[common][0]:
        a, b = a % (1 << INTS[common][1]), b % (1 << INTS[common][1])
    elif common is not None:
        a, b = wrap(a, common), wrap(b, common)
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b,
            "!=": a != b}[op]


def ieee_max(a: float, b: float) -> float:
    """IEEE-754 maximum on non-NaN values: -0.0 orders below +0.0."""
    return max((a, b), key=lambda v: (v, math.copysign(1.0, v)))


def ieee_min(a: float, b: float) -> float:
    return min((a, b), key=lambda v: (v, math.copysign(1.0, v)))


def exact_sum(values: list[float], dtype: str) -> float:
    """The sum judged against the exact result: each input rounded to its dtype, added
    exactly, rounded once."""
    total = sum((Fraction(round_float(Fraction(v), dtype)) for v in values), Fraction(0))
    return round_float(total, dtype)


# float -> float8 as TileLang's CUDA converts it (docs/semantics.md §8: cutlass's
# float_e4m3_t(float) is cvt.rn.satfinite on sm_89 and later; read from the source,
# decided on the H200 by tests/test_gpu_float8.py): through float32 first, then to
# nearest even with subnormals, and every magnitude past the largest finite value, ±inf
# included, saturated to it; NaN stays NaN. (significand bits, least normal exponent,
# largest finite value): e4m3fn's top exponent holds 448 at most, not (2 - 2^-3)·2^8.
FLOAT8 = {"float8_e4m3fn": (4, -6, Fraction(448)), "float8_e5m2": (3, -14, Fraction(57344))}


def to_float8(value: float, dtype: str) -> float:
    """value converted to a float8 dtype (FLOAT8 above), as a Python float."""
    if math.isnan(value):
        return math.nan
    p, emin, largest = FLOAT8[dtype]
    wide = value if math.isinf(value) else round_float(Fraction(value), "float32")
    if math.isinf(wide) or abs(Fraction(wide)) >= largest:
        return math.copysign(float(largest), wide)
    a = abs(Fraction(wide))
    if a == 0:
        return wide
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    rounded = min(round(a / quantum) * quantum, largest)   # Fraction rounds half to even
    return math.copysign(float(rounded), wide)


def stays_nan(_value: float, _dtype: str) -> float:
    """A NaN stays NaN through every float conversion (whatever its payload)."""
    return math.nan


RULES = {
    "float_to_int": ("float -> int truncates toward zero, saturates to the range of "
                     "max(32, bits) bits of the target's signedness and keeps the target's "
                     "bits; NaN -> 0 (16/32-bit float into <= 32 bits) or 100...0 of the "
                     "width", float_to_int),
    "int_to_float": ("int -> float rounds the exact integer to nearest even (into 16-bit "
                     "floats through float32, and then into bfloat16 toward zero, as "
                     "cutlass's bfloat16_t(int) does); past the largest finite value, inf",
                     int_to_float),
    "compare": ("mixed signedness compares in TVM's type: the wider, the unsigned at "
                "equal width (int8 < uint8 in uint8); a literal adopts the other type; a "
                "negative literal against an unsigned value has no answer (refused)",
                compare),
    "max_min": ("IEEE-754 maximum/minimum: max(-0.0, +0.0) = +0.0, min = -0.0",
                (ieee_max, ieee_min)),
    "float_to_float8": ("float -> float8 goes through float32, rounds to nearest even "
                        "(subnormals kept) and saturates past the largest finite value "
                        "(448, 57344), inf included; NaN stays NaN", to_float8),
    "nan": ("a NaN input stays NaN in bf16, f16 and every conversion", stays_nan),
    "float_sum": ("a float sum is the exact sum of the dtype-rounded inputs, rounded "
                  "once", exact_sum),
}


# ----------------------------------------------------------------------------- probes

@dataclass(frozen=True)
class Probe:
    name: str
    cls: str                          # cast, nan_payload, signed_zero, mixed_sign, ...
    rule: str                         # the RULES entry its truth comes from
    source: str
    inputs: dict = field(hash=False, compare=False)     # name -> np.ndarray
    out_dtype: str = "float32"
    truth: tuple = ()                 # the expected `out`, flat; () = must be refused
    exact: bool = True                # every backend must give the truth bit for bit
    wrong: tuple = ()                 # for sums: an output far from the truth

    def npz(self, arrays: dict) -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    def job(self) -> Job:
        """The probe as one campaign job: each step's JSON is kept for judge()."""
        given = ("--inputs", "{dir}/in.npz", "--json", "--values")    # judged value by value
        steps = [("run", "{prog}", "--backend", "interp", *given),
                 ("check", "{prog}", *given)]
        files = [("in.npz", self.npz(self.inputs))]
        if self.exact:
            steps.append(("run", "{prog}", "--backend", "sim", *given))
        else:
            for kind, values in (("wrong", self.wrong), ("right", self.truth)):
                files.append((f"{kind}.npz", self.npz({"out": _array(values, self.out_dtype)})))
                steps.append(("compare", "{prog}", "--outputs", f"{{dir}}/{kind}.npz",
                              *given))
        return Job(self.source.encode(), f"probe {self.cls}", tuple(steps), tuple(files),
                   keep_output=True)


def _array(values, dtype: str) -> np.ndarray:
    # bfloat16 and float8 travel as float32 (spec/dtypes.py), their values on their grid
    wide = dtype == "bfloat16" or dtype in FLOAT8
    return np.array(values, dtype=np.float32 if wide else dtype)


def _kernel(params: list[tuple[str, tuple, str]], n: int, out_dtype: str, op: str,
            body: str, title: str) -> str:
    args = ", ".join(f"{name}: T.Tensor({shape!r}, T.{dtype})" for name, shape, dtype in params)
    return (f"# A semantic probe ({title}); generated by verify/fuzzing/probes.py.\n"
            f"import tilelang.language as T\n\n\n"
            f"@T.prim_func\n"
            f"def main({args}, out: T.Tensor(({n},), T.{out_dtype})):\n"
            f"    with T.Kernel(1, threads=128) as bx:\n"
            f"        acc = T.alloc_reducer(({n},), T.{out_dtype}, op=\"{op}\")\n"
            f"        T.reducer_init(acc)\n"
            f"{body}"
            f"        res = T.alloc_fragment(({n},), T.{out_dtype})\n"
            f"        T.finalize_reducer(acc, res)\n"
            f"        T.copy(res, out)\n")


# the magnitudes every float -> int cast is probed at (the list, both signs)
CAST_VALUES = (0.5, 2.0**31, 3e9, 2.0**63, 1.5e19, 1e19, 2.0**64 + 8192, 1e30, math.inf,
               -math.inf, math.nan, -0.0, -0.5, -(2.0**31) - 1, -3e9, -(2.0**63),
               -1.5e19, 255.9, 256.0, -129.5, 65535.5, 4294967295.0)


def _conversion_probe(name: str, cls: str, rule: str, values: list, src: str, dst: str,
                      truth: tuple) -> Probe:
    """One program converting every value of an input x (of dtype src) to dst, each into
    an element of a dst sum reducer that receives nothing else."""
    n = len(values)
    body = (f"        for j in T.Parallel({n}):\n"
            f"            T.reducer_update(acc[j], T.cast(x[j], T.{dst}))\n")
    return Probe(name, cls, rule,
                 _kernel([("x", (n,), src)], n, dst, "sum", body, f"{src} -> {dst}"),
                 {"x": np.array(values, dtype=src)}, dst, truth)


def cast_probes() -> list[Probe]:
    probes = []
    for src in ("float64", "float32"):
        values = [v if math.isnan(v) else round_float(Fraction(v), src)
                  if math.isfinite(v) else v for v in CAST_VALUES]
        for dst in INTS:
            probes.append(_conversion_probe(
                f"cast_{src}_to_{dst}", "cast", "float_to_int", values, src, dst,
                tuple(float_to_int(v, dst, src) for v in values)))
    # constants fold in the frontend, a path of their own: per target, one program of
    # the constants whose value fits it, and one program per out-of-range constant (a
    # refusal of one must not hide the others). Only constants float32 holds exactly:
    # TVM makes a float literal float32, the reference may read it as float64, and the
    # probe must not depend on which.
    exact32 = [v for v in CAST_VALUES if math.isfinite(v)
               and round_float(Fraction(v), "float32") == v]
    for dst in INTS:
        lo, hi = int_range(dst)
        fitting = [v for v in exact32 if lo <= int(v) <= hi]
        probes.append(_constant_probe(f"cast_constants_to_{dst}", fitting, dst))
    for dst in ("int32", "uint32", "int64", "uint64"):
        for v in (3e9, 2.0**63, 2.0**64, 2.0**100, -3e9):
            lo, hi = int_range(dst)
            if not lo <= int(v) <= hi:
                slug = f"{'minus_' if v < 0 else ''}2p{math.log2(abs(v)):.4g}"
                probes.append(_constant_probe(f"cast_constant_{slug}_to_{dst}", [v], dst))
    return probes


# every float -> float8 conversion is probed at: ties (1 + 2^-4 between 1 and 1.125 in
# e4m3fn), subnormal ties, past the range and at its edge, infinities, NaN, a float64
# tie that float32 makes (1 + 2^-4 + 2^-40). No value rounds to -0: a sum reducer's
# identity 0 + (-0) is +0 on the GPU, a probe of the reducer rather than of the cast.
FLOAT8_VALUES = (1.0, 1.0625, 1.1875, 2.0**-10, 3 * 2.0**-10, 2.0**-17, 3 * 2.0**-17,
                 232.0, 240.0, 449.0, 464.0, 465.0, 61440.0, 1e5, 1e30, 1e300, math.inf,
                 -math.inf, math.nan, -3.3, 0.1, 1 + 2.0**-4 + 2.0**-40,
                 -(2.0**-9 + 2.0**-30), -57344.0 * 1.2)


def float8_probes() -> list[Probe]:
    probes = []
    for src in ("float64", "float32"):
        values = [v if not math.isfinite(v) else round_float(Fraction(v), src)
                  for v in FLOAT8_VALUES]
        for dst in FLOAT8:
            probes.append(_conversion_probe(
                f"cast_{src}_to_{dst}", "float8_cast", "float_to_float8", values, src, dst,
                tuple(to_float8(v, dst) for v in values)))
    return probes


def _constant_probe(name: str, values: list[float], dst: str) -> Probe:
    body = "".join(f"        T.reducer_update(acc[{k}], T.cast({v!r}, T.{dst}))\n"
                   for k, v in enumerate(values))
    n = len(values)
    return Probe(name, "cast", "float_to_int",
                 _kernel([("x", (1,), "float32")], n, dst, "sum", body, f"constants -> {dst}"),
                 {"x": np.zeros(1, np.float32)}, dst,
                 tuple(float_to_int(v, dst, "float32") for v in values))


# float32 bit patterns of NaNs whose payload bf16 or f16 would drop when truncated
NAN_BITS = (0x7F800001, 0x7F800100, 0x7F808000, 0xFF800001, 0x7FC00000, 0x7F80FFFF,
            0x7F801000, 0xFFFFFFFF)


def _nan_floats() -> np.ndarray:
    return np.frombuffer(struct.pack(f"<{len(NAN_BITS)}I", *NAN_BITS), dtype="<f4").copy()


def nan_probes() -> list[Probe]:
    probes, n = [], len(NAN_BITS)
    for dtype in ("bfloat16", "float16"):
        body = (f"        for j in T.Parallel({n}):\n"
                f"            T.reducer_update(acc[j], T.cast(x[j], T.float32))\n")
        probes.append(Probe(
            f"nan_input_{dtype}", "nan_payload", "nan",
            _kernel([("x", (n,), dtype)], n, "float32", "sum", body, f"NaN inputs in {dtype}"),
            {"x": _nan_floats()}, "float32", (math.nan,) * n))
        body = (f"        for j in T.Parallel({n}):\n"
                f"            T.reducer_update(acc[j], T.cast(T.cast(x[j], T.{dtype}), "
                f"T.float32))\n")
        probes.append(Probe(
            f"nan_cast_float32_to_{dtype}", "nan_payload", "nan",
            _kernel([("x", (n,), "float32")], n, "float32", "sum", body,
                    f"float32 NaNs cast to {dtype}"),
            {"x": _nan_floats()}, "float32", (math.nan,) * n))
    return probes


ZERO_PAIRS = ((-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0), (0.0, 0.0))


def signed_zero_probes() -> list[Probe]:
    probes, n = [], len(ZERO_PAIRS)
    x = [list(p) for p in ZERO_PAIRS]
    for dtype in ("float32", "float16", "bfloat16", "float64"):
        inputs = {"x": _array(x, dtype)}
        for op, pick in (("max", ieee_max), ("min", ieee_min)):
            body = (f"        for i, k in T.Parallel({n}, 2):\n"
                    f"            T.reducer_update(acc[i], x[i, k])\n")
            probes.append(Probe(
                f"zero_{op}_reducer_{dtype}", "signed_zero", "max_min",
                _kernel([("x", (n, 2), dtype)], n, dtype, op, body, f"{op} reducer of ±0"),
                inputs, dtype, tuple(pick(a, b) for a, b in ZERO_PAIRS)))
            # T.max / T.min of two values into a max reducer (its identity is -inf, so
            # the one contribution comes out as it is)
            body = (f"        for i in T.Parallel({n}):\n"
                    f"            T.reducer_update(acc[i], T.{op}(x[i, 0], x[i, 1]))\n")
            probes.append(Probe(
                f"zero_T{op}_{dtype}", "signed_zero", "max_min",
                _kernel([("x", (n, 2), dtype)], n, dtype, "max", body, f"T.{op} of ±0"),
                inputs, dtype, tuple(pick(a, b) for a, b in ZERO_PAIRS)))
    return probes


# (dtype of x, values of x, operator, constant): `x OP constant` as C compares them
SIGN_CONSTANTS = (("uint32", (0, 1, 2**31, 2**32 - 1), ">", -1),
                  ("uint32", (0, 1, 2**31, 2**32 - 1), "<", -1),
                  ("uint32", (0, 1, 2**31, 2**32 - 1), "==", -1),
                  ("uint64", (0, 1, 2**63, 2**64 - 1), ">", -1),
                  ("uint8", (0, 1, 128, 255), ">", -1),
                  ("uint16", (0, 1, 2**15, 2**16 - 1), ">=", -1),
                  ("int32", (-1, 0, 1, 2**31 - 1), "<", 2**31))
# (dtype of a, values, dtype of b, values, operator): two tensors of mixed signedness
SIGN_PAIRS = (("int32", (-1, 0, 5, -7), "uint32", (1, 1, 3, 2**32 - 7), "<"),
              ("int64", (-1, 0, 5, -7), "uint32", (1, 1, 3, 2**32 - 7), "<"),
              ("int64", (-1, 0, 5, -2**63), "uint64", (1, 1, 3, 2**63), "<"),
              ("int8", (-1, 0, 5, -128), "uint8", (1, 1, 3, 128), "<"),
              ("int32", (-1, 0, 5, -7), "uint64", (1, 1, 3, 2**64 - 7), ">"))


def mixed_sign_probes() -> list[Probe]:
    probes = []
    for dtype, values, op, const in SIGN_CONSTANTS:
        n = len(values)
        body = (f"        for j in T.Parallel({n}):\n"
                f"            T.reducer_update(acc[j], T.if_then_else(x[j] {op} {const}, 1, 0))\n")
        name = {">": "gt", "<": "lt", "==": "eq", ">=": "ge"}[op]
        answers = [compare(op, v, dtype, const, None) for v in values]
        probes.append(Probe(
            f"sign_{dtype}_{name}_{const}".replace("-", "minus"), "mixed_sign", "compare",
            _kernel([("x", (n,), dtype)], n, "int32", "sum", body, f"{dtype} {op} {const}"),
            {"x": np.array(values, dtype=dtype)}, "int32",
            () if None in answers else tuple(int(t) for t in answers)))
    for a_type, a_values, b_type, b_values, op in SIGN_PAIRS:
        n = len(a_values)
        body = (f"        for j in T.Parallel({n}):\n"
                f"            T.reducer_update(acc[j], T.if_then_else(a[j] {op} b[j], 1, 0))\n")
        probes.append(Probe(
            f"sign_{a_type}_{'lt' if op == '<' else 'gt'}_{b_type}", "mixed_sign", "compare",
            _kernel([("a", (n,), a_type), ("b", (n,), b_type)], n, "int32", "sum", body,
                    f"{a_type} {op} {b_type}"),
            {"a": np.array(a_values, dtype=a_type), "b": np.array(b_values, dtype=b_type)},
            "int32", tuple(int(compare(op, x, a_type, y, b_type))
                           for x, y in zip(a_values, b_values))))
    return probes


# (2**31 + 2**23 + 1: rounded once to bfloat16 it is 2**31 + 2**24, through float32 a tie,
# cut to 2**31; 65519 and 65520 are 65280 in bfloat16, 65504 and inf in float16)
INT_VALUES = {"int64": (0, 1, -1, 2**24 + 1, 2**31 + 1, 2**53 + 1, 2**62 + 2**9 + 1,
                        2**63 - 1, -2**63, 65504, 65520, -65520, 2**40 + 2**16 + 1,
                        2**31 + 2**23 + 1),
              "uint64": (0, 1, 2**32 - 1, 2**53 + 1, 2**63, 2**63 + 1, 2**64 - 1,
                         2**64 - 2**40 + 1, 65520)}


def int_to_float_probes() -> list[Probe]:
    probes = []
    for src, values in INT_VALUES.items():
        for dst in FLOATS:
            probes.append(_conversion_probe(
                f"int_{src}_to_{dst}", "int_to_float", "int_to_float", values, src, dst,
                tuple(int_to_float(v, dst) for v in values)))
    return probes


def _sum_probe(name: str, cls: str, dtype: str, values: list[float]) -> Probe:
    n = len(values)
    body = (f"        for j in T.Parallel({n}):\n"
            f"            T.reducer_update(acc[0], x[j])\n")
    source = _kernel([("x", (n,), dtype)], 1, dtype, "sum", body, f"{n} terms of {dtype}")
    truth = exact_sum(values, dtype)
    far = 1000.0 if abs(truth) < 500 else -truth
    return Probe(name, cls, "float_sum", source, {"x": _array(values, dtype)}, dtype,
                 (truth,), exact=False, wrong=(far,))


def sum_probes() -> list[Probe]:
    probes = [_sum_probe(f"overflow_sum_{dtype}", "overflow_sum", dtype, [big, big, -big])
              for dtype, big in (("float32", 3e38), ("bfloat16", 3e38), ("float16", 60000.0),
                                 ("float64", 1.7e308))]
    probes.append(_sum_probe("overflow_sum_float32_order", "overflow_sum", "float32",
                             [-3e38, 3e38, 3e38, -3e38, 3e38]))
    for dtype, n, seed in (("bfloat16", 256, 1), ("float16", 2048, 2), ("bfloat16", 1024, 3),
                           ("float32", 4096, 4)):
        rng = random.Random(f"probe:{dtype}:{n}:{seed}")
        values = [round_float(Fraction(rng.uniform(-4.0, 4.0)), dtype) for _ in range(n)]
        probes.append(_sum_probe(f"long_sum_{dtype}_{n}", "long_sum", dtype, values))
    # near overflow: 32 large values and their near-negatives, shuffled; the exact sum
    # is small, and an order that adds two of one sign first overflows
    rng = random.Random("probe:float64:near-overflow")
    big = [rng.uniform(1e307, 1.7e308) for _ in range(32)]
    values = big + [-v * (1 - 2.0**-20) for v in big]
    rng.shuffle(values)
    probes.append(_sum_probe("near_overflow_sum_float64_64", "overflow_sum", "float64", values))
    return probes


def all_probes() -> list[Probe]:
    return (cast_probes() + float8_probes() + nan_probes() + signed_zero_probes()
            + mixed_sign_probes() + int_to_float_probes() + sum_probes())


# ----------------------------------------------------------------------------- judging

@dataclass
class Verdict:
    probe: str
    status: str                       # ok, silently wrong, false alarm, refused, crash, ...
    notes: list[str] = field(default_factory=list)


def same(got, want, is_float: bool) -> bool:
    """Bit-level agreement where it matters: NaN equals NaN, zeros keep their sign."""
    if not is_float:
        return isinstance(got, (int, float)) and not isinstance(got, bool) \
            and float(got).is_integer() and int(got) == want
    if got is None:
        return False
    got = float(got)
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def _flat(values) -> list:
    if isinstance(values, list):
        return [v for item in values for v in _flat(item)]
    return [values]


def _out(doc: dict) -> list | None:
    out = (doc.get("outputs") or {}).get("out")
    return None if out is None else _flat(out["values"])


def _doc(step: dict) -> dict:
    try:
        return json.loads(step.get("stdout") or "{}")
    except ValueError:
        return {}


def judge(probe: Probe, outcome: Outcome) -> Verdict:
    """The probe's status from its job's steps (see the module doc)."""
    verdict = Verdict(probe.name, "ok")
    if outcome.failed:
        verdict.status = "crash"
        verdict.notes.append(f"{outcome.crash}: {outcome.detail}")
        return verdict
    is_float = probe.out_dtype in FLOATS or probe.out_dtype in FLOAT8
    if not probe.truth:
        answered = [f"{' '.join(s['argv'][:1])}: exit {s['exit_code']}" for s in outcome.steps
                    if s["exit_code"] not in (1, 2)]
        verdict.status = "silently wrong" if answered else "ok"
        verdict.notes = [f"answered what has no single meaning: {a}" for a in answered]
        return verdict
    wrong, alarms, refused = [], [], []
    for step in outcome.steps:
        argv, code, doc = step["argv"], step["exit_code"], _doc(step)
        what = " ".join(a for a in argv[:3] if not a.startswith("{"))
        if code in (1, 2):
            refused.append(f"{what}: exit {code} ({_reason(doc)})")
            continue
        if argv[0] == "compare":
            kind = "wrong" if "wrong.npz" in argv[2] else "right"
            if kind == "wrong" and code == 0:
                wrong.append(f"compare matched {probe.wrong} where the truth is {probe.truth}")
            if kind == "right" and code == 3:
                alarms.append(f"compare refused the truth {probe.truth}")
            continue
        got = _out(doc)
        if got is None:
            continue
        bad = [(i, g, t) for i, (g, t) in enumerate(zip(got, probe.truth))
               if not same(g, t, is_float)]
        if code == 0 and (bad or len(got) != len(probe.truth)):
            wrong.append(f"{what} said ok: " + "; ".join(
                f"out[{i}] = {g!r}, truth {t!r}" for i, g, t in bad[:6]))
        if code == 3 and not bad:
            alarms.append(f"{what}: mismatch, though its output is the truth")
        if argv[0] == "check" and code == 0:
            unchecked = sum(c.get("unchecked", 0) for rows in
                            (doc.get("comparisons") or {}).values() for c in rows)
            if unchecked:
                wrong.append(f"check said verified with {unchecked} element(s) unchecked")
    if wrong:
        verdict.status, verdict.notes = "silently wrong", wrong + alarms + refused
    elif alarms:
        verdict.status, verdict.notes = "false alarm", alarms + refused
    elif refused:
        verdict.status, verdict.notes = "refused", refused
    return verdict


def _reason(doc: dict) -> str:
    diags = doc.get("diagnostics") or []
    if diags:
        d = diags[0]
        return f"{d.get('code')} {d.get('message', '')[:100]}"
    return str(doc.get("error", ""))[:120]


def format_verdicts(verdicts: list[Verdict]) -> str:
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.status] = counts.get(v.status, 0) + 1
    lines = [f"{len(verdicts)} probes: " + ", ".join(f"{k}: {n}" for k, n in sorted(counts.items()))]
    for v in verdicts:
        if v.status != "ok":
            lines.append(f"- {v.probe}: {v.status}")
            lines += [f"    {note}" for note in v.notes]
    return "\n".join(lines)


def run_probes(probes: list[Probe], jobs: int = 1, time_limit: float = 60.0,
               memory_mb: int = 4096) -> tuple[list[Verdict], list[Outcome]]:
    """Every probe through its commands (forked children, as the campaign runs them)."""
    outcomes = run_jobs([p.job() for p in probes], jobs, time_limit, memory_mb)
    return [judge(p, o) for p, o in zip(probes, outcomes)], outcomes

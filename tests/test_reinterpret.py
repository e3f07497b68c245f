"""T.reinterpret (spec/reinterpret.py) against ground truth the code under test does not
compute:

- every pair of dtypes of one width, on sample values of the source: the bits are
  `struct.pack`'s (float16 'e', float32 'f', float64 'd', the integers' own formats;
  bfloat16 the upper half of the float32 'f'), and the float8 encodings are decoded by
  their formulas (sign, biased exponent, mantissa, subnormals), not by ml_dtypes;
- every 8- and 16-bit pattern survives a round trip through each dtype of its width
  (NaN patterns aside: their payload is not modelled);
- the width rule: R102 naming both dtypes, bool refused (a `handle` R101), a value as
  its own dtype is itself; Python numbers are int32/float32 as TVM converts them; the old argument order
  and `dtype=`; the printer spells it back;
- the interpreter: an exact value's bits are exact, an inexact value's or a NaN's are not
  judged (an infinite bound), a float8_e5m2 infinity is R102;
- the CUDA text of each pair and the static checks' reading of an integer
  reinterpretation as the wrapping conversion."""
from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen.cuda_exprs import C, reinterpret as c_reinterpret
from verify_reducer.spec import ir
from verify_reducer.spec import reinterpret as R
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.dtypes import DTYPES
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.printer import format_expr
from verify_reducer.verify.epochs.bounds import integer_conversion
from verify_reducer.verify.oracle import pipeline

HEADER = "import tilelang.language as T\n\nN = 8\n\n\n"

_STRUCT = {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i",
           "uint32": "I", "int64": "q", "uint64": "Q", "float16": "e", "float32": "f",
           "float64": "d"}
# (exponent bits, mantissa bits, bias, whether the all-ones exponent is inf/NaN (IEEE))
_FLOAT8 = {"float8_e4m3fn": (4, 3, 7, False), "float8_e5m2": (5, 2, 15, True)}

SAMPLES = {
    "int8": [0, 1, -1, 127, -128, 56, -2],
    "uint8": [0, 1, 255, 128, 56, 124, 60],
    "int16": [0, 1, -1, 32767, -32768, 15360, -16384],
    "uint16": [0, 1, 65535, 32768, 16256, 31744, 49152],
    "int32": [0, 1, -1, 2 ** 31 - 1, -2 ** 31, 1065353216, -8388608],
    "uint32": [0, 1, 2 ** 32 - 1, 2 ** 31, 1065353216, 2139095040, 4286578688],
    "int64": [0, 1, -1, 2 ** 63 - 1, -2 ** 63, 4607182418800017408],
    "uint64": [0, 1, 2 ** 64 - 1, 2 ** 63, 4607182418800017408, 9218868437227405312],
    "float8_e4m3fn": [0.0, -0.0, 1.0, -448.0, 2.0 ** -9, 0.875, 240.0, 2.0 ** -6],
    "float8_e5m2": [0.0, -0.0, 1.0, -57344.0, 2.0 ** -16, 3.0, 2.0 ** -14, 5.0],
    "float16": [0.0, -0.0, 1.0, -2.0, 65504.0, 2.0 ** -24, math.inf, -math.inf],
    "bfloat16": [0.0, -0.0, 1.0, -2.0, 0.15625, 2.0 ** -133, math.inf,
                 float.fromhex("0x1.fep127")],
    "float32": [0.0, -0.0, 1.0, -2.5, 0.1, 2.0 ** -149, math.inf, -math.inf],
    "float64": [0.0, -0.0, 1.0, -2.5, 0.1, 5e-324, math.inf, -math.inf],
}
WIDTHS = {8: ["int8", "uint8", "float8_e4m3fn", "float8_e5m2"],
          16: ["int16", "uint16", "float16", "bfloat16"],
          32: ["int32", "uint32", "float32"],
          64: ["int64", "uint64", "float64"]}
PAIRS = [(a, b) for names in WIDTHS.values() for a in names for b in names]


# ----------------------------------------------------------------------------- ground truth

def _float8_value(bits: int, name: str) -> float:
    """The value of a float8 bit pattern, from its format's definition."""
    e_bits, m_bits, bias, ieee = _FLOAT8[name]
    sign = -1.0 if bits >> 7 else 1.0
    exponent = (bits >> m_bits) & ((1 << e_bits) - 1)
    mantissa = bits & ((1 << m_bits) - 1)
    top = (1 << e_bits) - 1
    if ieee and exponent == top:
        return sign * math.inf if mantissa == 0 else math.nan
    if not ieee and exponent == top and mantissa == (1 << m_bits) - 1:
        return math.nan                                  # e4m3fn: S.1111.111 only
    if exponent == 0:
        return sign * mantissa * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + mantissa / (1 << m_bits)) * 2.0 ** (exponent - bias)


def _same(a: float, b: float) -> bool:
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def _bits(value, name: str) -> int:
    """The unsigned bit pattern of value in dtype `name`, by struct or by the formula."""
    if name in _FLOAT8:
        found = [b for b in range(256) if _same(_float8_value(b, name), value)]
        assert len(found) == 1, (value, name, found)
        return found[0]
    if name == "bfloat16":
        return struct.unpack(">I", struct.pack(">f", value))[0] >> 16
    width = DTYPES[name].bits
    return int.from_bytes(struct.pack("<" + _STRUCT[name], value), "little") & \
        ((1 << width) - 1)


def _value(bits: int, name: str):
    """The value of an unsigned bit pattern read as dtype `name`."""
    if name in _FLOAT8:
        return _float8_value(bits, name)
    if name == "bfloat16":
        return struct.unpack(">f", struct.pack(">I", bits << 16))[0]
    width = DTYPES[name].bits // 8
    return struct.unpack("<" + _STRUCT[name], bits.to_bytes(width, "little"))[0]


def _storage(values, name: str) -> np.ndarray:
    dtype = DTYPES[name]
    if dtype.is_int:
        return np.array(values, dtype=dtype.np)
    return dtype.quantize(np.array(values, dtype=np.float64))


# ----------------------------------------------------------------------------- numpy meaning

@pytest.mark.parametrize("src, dst", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_the_bits_are_struct_s(src, dst):
    values = SAMPLES[src]
    got = R.reinterpret(_storage(values, src), DTYPES[src], DTYPES[dst])
    for value, out in zip(values, got.tolist()):
        want = _value(_bits(value, src), dst)
        if isinstance(want, float) and math.isnan(want):
            assert math.isnan(out), (src, value, dst, out)
        elif isinstance(want, float):
            assert _same(float(out), want), (src, value, dst, out, want)
        else:
            assert out == want, (src, value, dst, out, want)


@pytest.mark.parametrize("width", [8, 16])
def test_every_pattern_round_trips(width):
    unsigned = DTYPES[f"uint{width}"]
    patterns = np.arange(1 << width, dtype=np.int64).astype(unsigned.np)
    for name in WIDTHS[width]:
        dtype = DTYPES[name]
        values = R.from_bits(patterns, dtype)
        keep = ~np.isnan(values) if dtype.is_float else \
            np.ones(len(patterns), dtype=bool)
        back = R.to_bits(values, dtype)
        assert (back[keep] == patterns[keep]).all(), name
        if dtype.is_float:                      # every non-NaN pattern is a distinct value
            assert keep.sum() == len({_bits_key(v) for v in values[keep].tolist()})


def _bits_key(v: float):
    return (v, math.copysign(1, v))


def test_a_float8_infinity_and_nans_are_found():
    e5m2 = DTYPES["float8_e5m2"]
    values = R.from_bits(np.array([0x3C, 0x7C, 0xFC], np.uint8), e5m2)
    assert R.unmodelled_float8(values, e5m2) == 0x7C
    assert R.unmodelled_float8(values[:1], e5m2) is None
    f32 = DTYPES["float32"]
    assert R.nan_lanes(np.array([1.0, np.nan], np.float32), f32).tolist() == [False, True]
    assert R.nan_lanes(np.array([1.0], np.float32), f32) is None
    assert R.nan_lanes(np.array([1], np.int32), DTYPES["int32"]) is None


# ----------------------------------------------------------------------------- frontend

def _kernel(body: str, params: str) -> str:
    lines = "\n".join("        " + line for line in body.strip("\n").splitlines())
    return (HEADER + "@T.prim_func\n"
            f"def main({params}):\n"
            "    with T.Kernel(1, threads=32) as bx:\n" + lines + "\n")


def _stored(body: str, params: str) -> ir.Expr:
    func = parse_source(_kernel(body, params), "r.py").func()
    (store,) = [s for s in ir.walk(func.kernel.body) if isinstance(s, ir.Store)]
    return store.value


def _error(body: str, params: str):
    with pytest.raises(DiagnosticError) as caught:
        parse_source(_kernel(body, params), "r.py")
    (d,) = caught.value.diagnostics
    return d


@pytest.mark.parametrize("src, dst", [("float32", "uint16"), ("float16", "int32"),
                                      ("float64", "float32"), ("int8", "bfloat16")])
def test_different_widths_are_r102_naming_both(src, dst):
    d = _error(f"for j in T.Parallel(N):\n    y[j] = T.reinterpret(x[j], T.{dst})",
               f"x: T.Tensor((N,), T.{src}), y: T.Tensor((N,), T.{dst})")
    assert d.code == "R102"
    assert src in d.message and dst in d.message and "one width" in d.message


def test_bool_is_refused():
    d = _error("for j in T.Parallel(N):\n    y[j] = T.reinterpret(x[j] > 0, T.uint8)",
               "x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.uint8)")
    assert d.code == "R102" and "bool" in d.message


def test_a_handle_is_refused_by_name():
    d = _error('y[0] = T.reinterpret(T.uint64(0), dtype="handle")',
               "x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.uint64)")
    assert d.code == "R101" and "T.reinterpret into `handle`" in d.message


def test_a_value_as_its_own_dtype_is_itself_and_the_spellings_agree():
    params = "x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.uint32)"
    same = _stored("for j in T.Parallel(N):\n    y[j] = T.reinterpret(x[j], T.float32)",
                   "x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.float32)")
    assert isinstance(same, ir.Load)
    texts = {format_expr(_stored(f"for j in T.Parallel(N):\n    y[j] = {call}", params))
             for call in ('T.reinterpret(x[j], "uint32")', "T.reinterpret(x[j], T.uint32)",
                          'T.reinterpret("uint32", x[j])', "T.reinterpret(x[j], dtype=T.uint32)",
                          "T.reinterpret(value=x[j], dtype='uint32')")}
    assert texts == {"T.reinterpret(x[j], T.uint32)"}


def test_python_numbers_are_typed_as_tvm_converts_them():
    params = "x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.uint32)"
    as_float = _stored("y[0] = T.reinterpret(1, T.float32)", params)
    assert as_float.args[0].dtype.name == "int32" and not as_float.args[0].weak
    as_bits = _stored("y[0] = T.reinterpret(0.5, T.uint32)", params)
    assert as_bits.args[0].dtype.name == "float32"
    wide = _error("y[0] = T.reinterpret(2**40, T.float32)", params)   # int64 is 64 bits
    assert wide.code == "R102" and "int64" in wide.message


# ----------------------------------------------------------------------------- interpreter

def _run(tmp_path: Path, body: str, params: str, inputs: dict[str, np.ndarray]):
    path = tmp_path / "r.py"
    path.write_text(_kernel(body, params))
    return pipeline.check(str(path), given=inputs, blocks="all")


def test_exact_bits_are_exact_and_inexact_ones_are_not_judged(tmp_path):
    report = _run(tmp_path, "for j in T.Parallel(N):\n"
                  "    y[j] = T.reinterpret(x[j] * 3.0, T.uint32)\n"
                  "    z[j] = T.reinterpret(T.exp(x[j]), T.uint32)",
                  "x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.uint32), "
                  "z: T.Tensor((N,), T.uint32)",
                  {"x": np.arange(8, dtype=np.float32)})
    ref = report.reference
    want = (np.arange(8, dtype=np.float32) * np.float32(3)).view(np.uint32)
    assert (ref.outputs["y"] == want).all() and not ref.bounds["y"].any()
    assert np.isinf(ref.bounds["z"]).all()
    assert report.exit_code == pipeline.EXIT_INCONCLUSIVE


def test_a_float8_infinity_from_bits_is_r102(tmp_path):
    report = _run(tmp_path, "for j in T.Parallel(N):\n"
                  "    y[j] = T.reinterpret(v[j], T.float8_e5m2)",
                  "v: T.Tensor((N,), T.uint8), y: T.Tensor((N,), T.float8_e5m2)",
                  {"v": np.array([60, 61, 62, 63, 64, 65, 66, 252], np.uint8)})
    (d,) = [d for d in report.diagnostics if d.is_error]
    assert d.code == "R102" and "0xfc" in d.message and "infinit" in d.message
    assert report.exit_code == pipeline.EXIT_REJECTED


# ----------------------------------------------------------------------------- CUDA, Z3

@pytest.mark.parametrize("src, dst, text", [
    ("float32", "uint32", "__float_as_uint(a)"),
    ("float32", "int32", "__float_as_int(a)"),
    ("int32", "float32", "__int_as_float(a)"),
    ("uint32", "float32", "__uint_as_float(a)"),
    ("int32", "uint32", "(unsigned int)a"),
    ("float64", "int64", "__double_as_longlong(a)"),
    ("float64", "uint64", "(unsigned long long)__double_as_longlong(a)"),
    ("uint64", "float64", "__longlong_as_double((long long)a)"),
    ("float16", "uint16", "__half_as_ushort(a)"),
    ("int16", "float16", "__short_as_half(a)"),
    ("bfloat16", "int16", "__bfloat16_as_short(a)"),
    ("uint16", "bfloat16", "__ushort_as_bfloat16(a)"),
    ("float16", "bfloat16", "__ushort_as_bfloat16(__half_as_ushort(a))"),
    ("float8_e4m3fn", "uint8", "a.__x"),
    ("float8_e5m2", "int8", "(signed char)a.__x"),
    ("uint8", "float8_e4m3fn",
     "[&]() -> __nv_fp8_e4m3 { __nv_fp8_e4m3 r; r.__x = (unsigned char)a; return r; }()"),
])
def test_cuda_bit_casts(src, dst, text):
    assert c_reinterpret(C("a"), DTYPES[src], DTYPES[dst]).text == text


def test_static_checks_read_integer_reinterpretations_as_conversions():
    params = "x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.uint32)"
    wrap = _stored("for j in T.Parallel(N):\n    y[j] = T.reinterpret(j - 2, T.uint32)",
                   params)
    assert integer_conversion(wrap) is wrap.args[0]
    bits = _stored("for j in T.Parallel(N):\n    y[j] = T.reinterpret(x[j], T.uint32)",
                   params)
    assert integer_conversion(bits) is None

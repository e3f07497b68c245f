"""The float8 dtypes (float8_e4m3fn, float8_e5m2; float8_e4m3 is TileLang's spelling of
the first on CUDA), against ml_dtypes and against the GPU's conversion as CUDA documents
it (docs/semantics.md §8):

- every one of the 256 bit patterns of each format is a fixed point of `quantize` and
  equals ml_dtypes' value; every float32 halfway point between neighbours rounds to
  nearest even as ml_dtypes rounds it;
- past the largest finite value (infinity included) a conversion saturates
  (cvt.rn.satfinite), where ml_dtypes gives NaN (e4m3fn) or inf (e5m2); NaN stays NaN;
- limits, promotion and exact conversions (R210) as the formats say;
- inputs: numbers, ml_dtypes arrays and raw bytes (`|V1`, `<f1`: what np.savez writes
  for ml_dtypes arrays), refusals of values beyond the range and of infinities;
- the CUDA runner's one-byte layout round-trips every pattern, and the TileLang backend
  hands torch the same bytes;
- a float8 sum is the exact sum rounded once (by enumeration of the format), and one
  that some order saturates is not judged;
- T.infinity of a float8 dtype is R102 naming it.

Expected values are ml_dtypes' or written by hand, never the code under test's."""
from __future__ import annotations

import io
import math
import zipfile
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.dtypes import DTYPES, converts_exactly, lookup, promote
from verify_reducer.spec.frontend import parse_source
from verify_reducer.verify.oracle import inputs as inputs_mod

FORMATS = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}
IDS = list(FORMATS)


def _patterns(name: str) -> np.ndarray:
    """The 256 values of the format, as float32 (NaN patterns included)."""
    return np.arange(256, dtype=np.uint8).view(FORMATS[name]).astype(np.float32)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit for bit in float32, every NaN equal to every NaN."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    both_nan = np.isnan(a) & np.isnan(b)
    return bool(np.all(both_nan | (a.view(np.uint32) == b.view(np.uint32))))


@pytest.mark.parametrize("name", IDS)
def test_every_bit_pattern_is_a_fixed_point(name):
    """Every finite and NaN pattern; e5m2's two infinities convert like any float
    infinity: saturated (float8 is modelled without infinities)."""
    values = _patterns(name)
    finite = ~np.isinf(values)
    assert _same(DTYPES[name].quantize(values[finite]), values[finite])
    assert DTYPES[name].quantize(values[~finite]).tolist() == \
        [57344.0 * np.sign(v) for v in values[~finite]]
    assert finite.sum() == (256 if name == "float8_e4m3fn" else 254)


@pytest.mark.parametrize("name", IDS)
def test_halfway_points_round_to_nearest_even_as_ml_dtypes(name):
    """Between every two neighbouring finite values: the midpoint and the floats just
    beside it; ml_dtypes rounds to nearest even, and so does the GPU within range."""
    values = np.unique(_patterns(name)[np.isfinite(_patterns(name))].astype(np.float64))
    mids = ((values[1:] + values[:-1]) / 2).astype(np.float32)      # exact in float32
    probes = np.concatenate([mids, np.nextafter(mids, np.float32(np.inf)),
                             np.nextafter(mids, np.float32(-np.inf))])
    want = probes.astype(FORMATS[name]).astype(np.float32)
    assert _same(DTYPES[name].quantize(probes), want)


def test_a_tie_goes_to_the_even_neighbour():
    e4 = DTYPES["float8_e4m3fn"]
    # 1.0625 lies halfway between 1.0 (mantissa 000) and 1.125 (001); 1.1875 between
    # 1.125 and 1.25 (010); 2**-10 between 0 and the least subnormal 2**-9
    assert e4.quantize(np.float32([1.0625, 1.1875, 2.0 ** -10, 3 * 2.0 ** -10])).tolist() \
        == [1.0, 1.25, 0.0, 2.0 ** -8]


@pytest.mark.parametrize("name, top", [("float8_e4m3fn", 448.0), ("float8_e5m2", 57344.0)])
def test_out_of_range_saturates_where_ml_dtypes_would_not(name, top):
    dtype = DTYPES[name]
    x = np.float32([top * 1.04, top * 1.1, 1e30, np.inf, -np.inf, -top * 3])
    assert dtype.quantize(x).tolist() == [top, top, top, top, -top, -top]
    # ml_dtypes itself overflows: NaN without infinities (e4m3fn), inf with (e5m2)
    assert not np.isfinite(x[1:4].astype(FORMATS[name]).astype(np.float32)).any()


@pytest.mark.parametrize("name", IDS)
def test_nan_and_signed_zero_survive(name):
    got = DTYPES[name].quantize(np.float32([np.nan, -0.0, -1e-30, 1e-30]))
    assert np.isnan(got[0])
    assert [np.signbit(v) for v in got[1:]] == [True, True, False]
    assert got[1:].tolist() == [0.0, 0.0, 0.0]


def test_wide_sources_go_through_float32_first():
    """cutlass's float_e4m3_t(double) and (int) convert float(x) first: 1 + 2**-4 +
    2**-40 is float32's 1 + 2**-4, a tie that goes to 1.0 (directly it would be 1.125);
    2**24 + 1 is float32's 2**24, saturated."""
    e4 = DTYPES["float8_e4m3fn"]
    assert e4.quantize(np.float64([1 + 2.0 ** -4 + 2.0 ** -40])).tolist() == [1.0]
    assert e4.quantize(np.array([17, 19, 2 ** 24 + 1], np.int64)).tolist() == [16.0, 20.0, 448.0]


def test_limits():
    e4, e5 = DTYPES["float8_e4m3fn"], DTYPES["float8_e5m2"]
    assert (e4.finite_max, e4.smallest_normal, e4.smallest_subnormal) == (448.0, 2.0 ** -6, 2.0 ** -9)
    assert (e5.finite_max, e5.smallest_normal, e5.smallest_subnormal) == (57344.0, 2.0 ** -14, 2.0 ** -16)
    assert (e4.unit_roundoff, e5.unit_roundoff) == (2.0 ** -4, 2.0 ** -3)
    assert e4.emulated and e4.saturates and e4.bits == 8 and e4.np == np.float32
    assert not DTYPES["float16"].saturates and DTYPES["bfloat16"].emulated
    assert lookup("float8_e4m3") is e4                 # TileLang's CUDA prints fp8_e4_t


def test_promotion_and_exact_conversions():
    e4, e5 = DTYPES["float8_e4m3fn"], DTYPES["float8_e5m2"]
    f16, bf16, f32 = DTYPES["float16"], DTYPES["bfloat16"], DTYPES["float32"]
    assert promote(e4, f32) is f32 and promote(e4, f16) is f16 and promote(e5, bf16) is bf16
    assert promote(e4, DTYPES["int32"]) is e4 and promote(e4, e5) is f32
    for wide in (f16, bf16, f32, DTYPES["float64"]):
        assert converts_exactly(e4, wide) and converts_exactly(e5, wide)
    assert not converts_exactly(e4, e5) and not converts_exactly(e5, e4)
    assert not converts_exactly(f16, e4) and not converts_exactly(DTYPES["int8"], e4)
    assert converts_exactly(DTYPES["bool"], e5)


# ----------------------------------------------------------------------------- inputs

class _Param:
    def __init__(self, name: str, dtype: str, shape=(4,)):
        self.name, self.dtype, self.shape = name, DTYPES[dtype], shape
        self.size = int(np.prod(shape))


def _npz(**arrays) -> str:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@pytest.mark.parametrize("name", IDS)
def test_ml_dtypes_arrays_and_raw_bytes_are_read(tmp_path, name):
    values = np.float32([1.0, -0.0, 0.0625, -2.5])
    param = _Param("a", name)
    as_ml = values.astype(FORMATS[name])
    assert _same(inputs_mod._conform(param, as_ml, "given"), values)
    path = tmp_path / "in.npz"
    path.write_bytes(_npz(a=as_ml))      # e4m3fn is saved as |V1, e5m2 as <f1
    with zipfile.ZipFile(path) as archive:
        loaded = inputs_mod._read_member(archive, archive.getinfo("a.npy"), param, "input")
    assert _same(inputs_mod._conform(param, loaded, str(path)), values)


def test_raw_bytes_are_the_parameters_own_bit_patterns():
    param = _Param("a", "float8_e4m3fn")
    raw = np.array([0x38, 0x7E, 0xFE, 0x01], np.uint8).view("V1")
    assert inputs_mod._conform(param, raw, "given").tolist() == [1.0, 448.0, -448.0, 2.0 ** -9]


def test_numbers_beyond_the_range_and_infinities_are_refused():
    with pytest.raises(inputs_mod.InputError, match=r"a\[1\] = 449.0 is beyond the range "
                                                    r"of float8_e4m3fn \(±448\)"):
        inputs_mod._conform(_Param("a", "float8_e4m3fn"), [1.0, 449.0, 0, 0], "given")
    raw_inf = np.array([0x7C, 0, 0, 0], np.uint8).view("V1")       # +inf in e5m2
    with pytest.raises(inputs_mod.InputError, match="is infinite: float8_e5m2 values are "
                                                    "modelled without infinities"):
        inputs_mod._conform(_Param("a", "float8_e5m2"), raw_inf, "given")
    # a uint8 array is numbers, never bit patterns
    assert inputs_mod._conform(_Param("a", "float8_e4m3fn"), np.uint8([0, 1, 2, 3]),
                               "given").tolist() == [0.0, 1.0, 2.0, 3.0]


def test_a_void_array_is_still_refused_for_other_dtypes():
    with pytest.raises(inputs_mod.InputError, match="structured or void records"):
        inputs_mod._conform(_Param("a", "float16"), np.zeros(4, "V1"), "given")
    # an ml_dtypes float8 array is numbers for any parameter
    as_e4m3 = np.float32([1.0, -2.5, 448.0, 0.0]).astype(ml_dtypes.float8_e4m3fn)
    assert inputs_mod._conform(_Param("a", "float16"), as_e4m3, "given").tolist() == \
        [1.0, -2.5, 448.0, 0.0]


# ----------------------------------------------------------------------------- runner

@pytest.mark.parametrize("name", IDS)
def test_the_device_layout_round_trips_every_pattern(name):
    from verify_reducer.codegen.runner import _from_device_layout, _to_device_layout
    dtype = DTYPES[name]
    values = _patterns(name)
    finite = values[~np.isinf(values)]
    device = _to_device_layout(finite, dtype)
    assert device.dtype == np.uint8 and device.nbytes == finite.size
    assert _same(_from_device_layout(device, dtype), finite)
    ours = finite[~np.isnan(finite)]
    assert (_to_device_layout(ours, dtype) == ours.astype(FORMATS[name]).view(np.uint8)).all()


# ----------------------------------------------------------------------------- frontend

@pytest.mark.parametrize("name", IDS)
def test_infinity_of_a_float8_dtype_is_refused_by_name(name):
    source = ("import tilelang.language as T\n\n\n@T.prim_func\n"
              "def main(y: T.Tensor((4,), T.float32)):\n"
              "    with T.Kernel(1, threads=32) as bx:\n"
              "        for j in T.Parallel(4):\n"
              f"            y[j] = T.cast(T.infinity(T.{name}), T.float32)\n")
    with pytest.raises(DiagnosticError) as refused:
        parse_source(source, "inf.py")
    (d,) = refused.value.diagnostics
    assert d.code == "R102" and d.message.startswith(f"T.infinity({name}) is not supported: "
                                                     "float8 values are modelled saturating")


# ----------------------------------------------------------------------------- TileLang

class _FakeTensor:
    """What the TileLang backend's marshalling touches of a torch tensor."""

    def __init__(self, array: np.ndarray, dtype: str):
        self.array, self.dtype = array, dtype

    def view(self, dtype: str) -> "_FakeTensor":
        return _FakeTensor(self.array, dtype)          # same bytes, another element type

    def to(self, device: str) -> "_FakeTensor":
        return self

    def cpu(self) -> "_FakeTensor":
        return self

    def numpy(self) -> np.ndarray:
        return self.array


class _FakeTorch:
    uint8 = "uint8"
    float8_e4m3fn = "float8_e4m3fn"
    float8_e5m2 = "float8_e5m2"

    @staticmethod
    def from_numpy(array: np.ndarray) -> _FakeTensor:
        return _FakeTensor(array, str(array.dtype))


@pytest.mark.parametrize("name", IDS)
def test_tilelang_gets_the_bit_patterns_as_torch_float8(name):
    """The TileLang backend hands torch a float8 view of the exact bytes (no conversion
    of torch's between our values and the kernel) and reads the bytes back."""
    from verify_reducer.codegen.tilelang_backend import _from_torch, _to_torch
    values = np.float32([1.0, -0.0, 2.0 ** -9, -448.0, 0.3125, np.nan])
    param = _Param("a", name, shape=(6,))
    tensor = _to_torch(_FakeTorch, values, param)
    assert tensor.dtype == name and tensor.array.dtype == np.uint8
    assert (tensor.array[:5] == values[:5].astype(FORMATS[name]).view(np.uint8)[:5]).all()
    assert _same(_from_torch(_FakeTorch, tensor, DTYPES[name]),
                 DTYPES[name].quantize(values))


# ----------------------------------------------------------------------------- reductions

def _nearest_even(exact: Fraction, name: str) -> float:
    """exact rounded to the format by enumeration: the nearest finite value, a tie to the
    even bit pattern, past the largest finite value saturated (the GPU's meaning)."""
    patterns = np.arange(256, dtype=np.uint8)
    values = patterns.view(FORMATS[name]).astype(np.float64)
    finite = np.isfinite(values)
    top = max(values[finite])
    if abs(exact) > top:
        return math.copysign(top, exact)
    best = min(((abs(Fraction(v) - exact), int(p) & 1, v)
                for p, v in zip(patterns[finite], values[finite])), key=lambda t: t[:2])
    return best[2]


@pytest.mark.parametrize("name", IDS)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=12))
@settings(max_examples=60, deadline=None)
def test_a_float8_sum_is_the_exact_sum_rounded_once(name, patterns):
    from verify_reducer.interp.exact import combine
    from verify_reducer.spec.ops import MONOIDS
    values = np.uint8(patterns).view(FORMATS[name]).astype(np.float32)
    values = values[np.isfinite(values)]
    assume(values.size)
    dtype = DTYPES[name]
    out, bound, _ = combine(MONOIDS["sum"], dtype, np.zeros(values.size, np.int64), values,
                            None, 1)
    exact = sum((Fraction(float(v)) for v in values), Fraction(0))
    assert float(out[0]) == _nearest_even(exact, name)
    assert bound[0] >= 0


def test_a_float8_sum_some_order_saturates_is_not_judged():
    """300 + 300 - 300: one order saturates at 448 and ends at 148, another gives 300;
    no bound around 300 holds both, and no infinity marks the first: not judged."""
    from verify_reducer.interp.exact import combine
    from verify_reducer.spec.ops import MONOIDS
    e4 = DTYPES["float8_e4m3fn"]
    values = e4.quantize(np.float32([288.0, 288.0, -288.0]))
    out, bound, _ = combine(MONOIDS["sum"], e4, np.zeros(3, np.int64), values, None, 1)
    assert out.tolist() == [288.0] and bound.tolist() == [math.inf]
    # a short exact sum is exact in every order: bound 0
    halves = e4.quantize(np.float32([0.5, -1.0, 1.0, 0.5]))
    out, bound, _ = combine(MONOIDS["sum"], e4, np.zeros(4, np.int64), halves, None, 1)
    assert out.tolist() == [1.0] and bound.tolist() == [0.0]


# ----------------------------------------------------------------------------- CLI

CAST_PROGRAM = '''import tilelang.language as T

N = 4


@T.prim_func
def main(a: T.Tensor((N,), T.float8_e5m2), x: T.Tensor((N,), T.float32),
         q: T.Tensor((N,), T.float8_e4m3fn), y: T.Tensor((N,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            q[j] = x[j] * 2.0
            y[j] = T.cast(a[j], T.float32) + 1.0
'''


def test_run_reads_ml_dtypes_npz_writes_float32_and_compare_reads_it_back(tmp_path, capsys):
    """run --inputs IN.npz (np.savez of ml_dtypes arrays) --output OUT.npz, then compare
    --outputs OUT.npz: a float8 tensor travels as raw bytes in and float32 values out;
    an input past the range is a usage error (exit 2) naming it."""
    from verify_reducer.verify.cli.commands import main
    program = tmp_path / "cast.py"
    program.write_text(CAST_PROGRAM)
    given = tmp_path / "in.npz"
    given.write_bytes(_npz(a=np.float32([1.0, -0.5, 57344.0, 3.0]).astype(ml_dtypes.float8_e5m2),
                           x=np.float32([1.0, 300.0, -0.03125, 0.1])))
    out = tmp_path / "out.npz"
    assert main(["run", str(program), "--backend", "sim", "--inputs", str(given),
                 "--output", str(out)]) == 0
    with np.load(out) as written:
        assert written["q"].dtype == np.float32
        assert written["q"].tolist() == [2.0, 448.0, -0.0625, 0.203125]   # 600 saturates
        assert written["y"].tolist() == [2.0, 0.5, 57345.0, 4.0]
    capsys.readouterr()
    assert main(["compare", str(program), "--outputs", str(out), "--inputs", str(given)]) == 0
    beyond = tmp_path / "beyond.npz"
    beyond.write_bytes(_npz(a=np.float32([1.0, 2.0, 3.0, 60000.0])))
    capsys.readouterr()
    assert main(["run", str(program), "--backend", "interp", "--inputs", str(beyond)]) == 2
    assert "a[3] = 60000.0 is beyond the range of float8_e5m2 (±57344)" in \
        capsys.readouterr().err

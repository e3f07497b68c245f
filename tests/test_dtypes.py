"""spec.dtypes and spec.ops: identities, conversions, promotion."""
import numpy as np
import pytest

from verify_reducer.spec.dtypes import DTYPES, converts_exactly, lookup, promote
from verify_reducer.spec.ops import MONOIDS, monoid


def test_float64_to_16_bit_floats_rounds_through_float32_as_tilelang_does():
    # 1 + 2^-8 + 2^-40 lies just above the midpoint of 1 and 1 + 2^-7. TileLang prints
    # bfloat16_t(x) / half_t(x), which convert a float: rounding to float32 drops 2^-40
    # and the tie goes to even (1.0), on the H200 too
    # (docs/gpu-runs/2026-12-03-edge-semantics.log, `tld2n`).
    bf16, f16 = DTYPES["bfloat16"], DTYPES["float16"]
    x = np.array([1 + 2**-8 + 2**-40, 1 + 2**-8, -(1 + 2**-8 + 2**-40), 1e300])
    assert bf16.quantize(x).tolist() == [1.0, 1.0, -1.0, float("inf")]
    assert f16.quantize(np.array([1 + 2**-11 + 2**-50])).tolist() == [1.0]


@pytest.mark.parametrize("name", sorted(DTYPES))
@pytest.mark.parametrize("op", sorted(MONOIDS))
def test_identity_is_neutral(name, op):
    dtype, m = DTYPES[name], MONOIDS[op]
    if not m.supports(dtype) or dtype.is_bool:
        return
    values = dtype.quantize(np.array([-3, 0, 1, 5, 100]))
    e = np.full(values.shape, m.identity(dtype))
    assert np.array_equal(m.combine(dtype, values, dtype.quantize(e)), values)


def test_integer_sum_wraps():
    i8 = DTYPES["int8"]
    assert MONOIDS["sum"].combine(i8, np.int8(127), np.int8(1)).item() == -128


def test_bitwise_needs_integers():
    assert not MONOIDS["bitxor"].supports(DTYPES["float32"])
    assert MONOIDS["bitxor"].supports(DTYPES["uint32"])


def test_aliases_and_promotion():
    assert lookup("half") is DTYPES["float16"] and monoid("add") is MONOIDS["sum"]
    assert promote(DTYPES["int32"], DTYPES["float16"]) is DTYPES["float16"]
    assert promote(DTYPES["int32"], DTYPES["uint32"]) is DTYPES["uint32"]


def test_exact_conversions():
    assert converts_exactly(DTYPES["float16"], DTYPES["float32"])
    assert not converts_exactly(DTYPES["float32"], DTYPES["int32"])
    assert converts_exactly(DTYPES["int16"], DTYPES["float32"])
    assert not converts_exactly(DTYPES["int32"], DTYPES["float32"])
    assert not converts_exactly(DTYPES["int8"], DTYPES["uint32"])

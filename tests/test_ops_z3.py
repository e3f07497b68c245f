"""The op table's monoids are monoids: Z3 proves associativity, commutativity and the
identity law for every op on every integer dtype (bit-vectors of the dtype's width, so
wrap-around is included), reading the combine from spec.ops — the same table the
interpreter and the CUDA renderer use. For floats it shows why the interpreter needs a
reassociation bound: IEEE float32 addition is refuted as associative."""
import pytest
import z3

from verify_reducer.spec.dtypes import DTYPES
from verify_reducer.spec.ops import MONOIDS

INT_DTYPES = [DTYPES[n] for n in ("int8", "uint8", "int32", "uint32", "int64")]


def _bits(dtype, value):
    return z3.BitVecVal(value % (1 << dtype.bits), dtype.bits)


def _proved(claim) -> bool:
    solver = z3.Solver()
    solver.set("timeout", 5000)
    solver.add(z3.Not(claim))
    result = solver.check()
    assert result != z3.unknown, "an unknown is never a pass"
    return result == z3.unsat


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
@pytest.mark.parametrize("op", sorted(MONOIDS))
def test_integer_monoid_laws(op, dtype):
    m = MONOIDS[op]
    a, b, c = z3.BitVecs("a b c", dtype.bits)
    e = _bits(dtype, m.identity(dtype))
    f = lambda x, y: m.z3_combine(dtype, x, y)  # noqa: E731
    assert _proved(f(f(a, b), c) == f(a, f(b, c))), "associative"
    assert _proved(f(a, b) == f(b, a)), "commutative"
    assert _proved(z3.And(f(e, a) == a, f(a, e) == a)), f"identity {m.identity(dtype)}"


def test_a_wrong_identity_is_refuted():
    # the table's rule matters: 0 is not the identity of max on int32 (max(0, -5) = 0)
    m, int32 = MONOIDS["max"], DTYPES["int32"]
    a = z3.BitVec("a", 32)
    assert not _proved(m.z3_combine(int32, _bits(int32, 0), a) == a)


def test_float32_addition_is_not_associative():
    # a = 1 and c = −1 fixed keeps the query small: Z3 finds a b for which
    # (1 + b) − 1 and 1 + (b − 1) round differently
    fp = z3.Float32()
    b = z3.FP("b", fp)
    one, minus_one = z3.FPVal(1.0, fp), z3.FPVal(-1.0, fp)
    add = lambda x, y: z3.fpAdd(z3.RNE(), x, y)  # noqa: E731
    finite = z3.Not(z3.Or(z3.fpIsNaN(b), z3.fpIsInf(b)))
    assert not _proved(z3.Implies(finite, add(add(one, b), minus_one) ==
                                  add(one, add(b, minus_one))))

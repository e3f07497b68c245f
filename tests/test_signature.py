"""ThreadGroupSignature: derived from loop layouts, compared by Z3 proofs."""
from __future__ import annotations

from verify_reducer.spec.indexexpr import Const, Var
from verify_reducer.spec.layout import Layout
from verify_reducer.codegen.proofs.obligation import PROVED, REFUTED
from verify_reducer.codegen.proofs.fast import same_signature
from verify_reducer.codegen.proofs.layout import prove_site
from verify_reducer.codegen.proofs.signature import ReductionStep, Site, signature

j, rep = Var("j"), Var("rep")


def _site(thread, line=10, extent=8, replicate=16, count=128) -> Site:
    layout = Layout((extent,), ("j",), thread, 0, count, replicate)
    return Site(None, line, layout, (0, count), (Const(0),), reducer_name="acc")


def _one_thread(t: int):
    """1 where 8*rep + j == t, else 0, written with floor division only."""
    flat = 8 * rep + j
    return (flat - t + 128) // 128 - (flat - t - 1 + 128) // 128


def test_signature_of_the_minimal_example():
    sig = signature(_site(8 * rep + j))
    assert sig.steps == (ReductionStep(8, 1, 1),)
    assert sig.exact and sig.width == 8
    assert sig.participants == (0, 128)


def test_differently_written_equal_layouts_prove_equal():
    plain = _site(8 * rep + j, line=10)
    wrapped = _site((j + 8 * rep) % 128, line=11)
    identity = _site(8 * (rep % 16) + 8 * (j // 8) + j % 8, line=12)
    assert str(plain.layout.thread) != str(wrapped.layout.thread)
    for other in (wrapped, identity):
        assert signature(other).steps == signature(plain).steps
        result = same_signature(plain, other)
        assert result.result == PROVED, result.counterexample
        assert "(check-sat)" in result.smt2


def test_layouts_differing_for_one_thread_are_found_minimized():
    # threads 37 and 46 trade places: j=5 of replica 4 and j=6 of replica 5
    swap = _one_thread(37) * 9 - _one_thread(46) * 9
    plain = _site(8 * rep + j, line=10)
    twisted = _site(8 * rep + j + swap, line=11)
    assert sorted(twisted.layout.threads_of().ravel()) == list(range(128))
    result = same_signature(plain, twisted)
    assert result.result == REFUTED
    assert result.witness["low"] == 37            # the smallest thread that differs
    assert "37" in result.counterexample and "line 11" in result.counterexample


def test_canonical_obligations_hold_and_fail():
    assert all(p.result == PROVED for p in prove_site(_site(8 * rep + j)))
    clash = Layout((8,), ("j",), 8 * rep + j % 4, 0, 128, 16)   # j and j+4 collide
    result = prove_site(Site(None, 7, clash, (0, 128), (Const(0),)))[0]
    assert result.result == REFUTED
    assert "thread 0" in result.counterexample

"""The inverse of an access's index map (codegen.layout_inverse) and the fragment layout a
loop composes through it (layout_rules.compose): every affine index whose coefficients
form a mixed radix places the fragment where the loop runs the iterations that touch
each element; any other index has no inverse, and the loop leaves the fragment alone."""
import numpy as np
import pytest

from verify_reducer.codegen.layout_access import Access
from verify_reducer.codegen.layout_inverse import invert_access
from verify_reducer.codegen.layout_rules import check, compose
from verify_reducer.spec import ir
from verify_reducer.spec.dtypes import FLOAT32
from verify_reducer.spec.indexexpr import Const, Var
from verify_reducer.spec.layout import default_partition
from verify_reducer.spec.source import Span

SPAN = Span(1, 0, 1, 0)
i, j, k, it = Var("i"), Var("j"), Var("k"), Var("it")


def access(shape, index, write=False) -> Access:
    """x_frag[index]; `it` is a serial loop variable over the first dimension."""
    buffer = ir.Buffer("x_frag", tuple(shape), FLOAT32, "fragment", SPAN)
    domains = {"it": np.arange(shape[0])} if any("it" in e.free_vars() for e in index) else {}
    return Access(buffer, tuple(index), write, SPAN, domains)


# (fragment shape, index, loop variables, loop extents, threads)
PLACEABLE = {
    "sum with a unit extent": ((3, 2), (it, i + k), ("i", "k"), (2, 1), 64),
    "strided pairs": ((3, 32), (it, 2 * j + k), ("j", "k"), (16, 2), 64),
    "interleaved on 96": ((2, 48), (it, i + 2 * k), ("i", "k"), (2, 24), 96),
    "constant offset": ((3, 34), (it, j + 2), ("j",), (32,), 64),
    "reversed": ((2, 32), (it, 31 - j), ("j",), (32,), 128),
    "every other column": ((2, 64), (it, 2 * j), ("j",), (32,), 64),
    "holes between digits": ((16,), (4 * i + k,), ("i", "k"), (4, 2), 32),
    "an unused loop variable": ((4, 8), (Const(1), j), ("i", "j"), (4, 8), 128),
    "two loop dimensions": ((8, 6), (i + 4, 3 * k + j), ("i", "j", "k"), (4, 3, 2), 64),
    "digits swapped": ((2, 16), (it, (k % 2) * 8 + k // 2), ("k",), (16,), 128),
    "a digit left out": ((3, 16), (it, j // 2), ("j",), (32,), 64),
    "a middle digit left out": ((3, 8), (it, (j // 8) * 4 + j % 4), ("j",), (16,), 32),
    "a gap above a digit": ((3, 24), (it, 12 * i + k), ("i", "k"), (2, 5), 32),
    "a gap and an offset": ((3, 24), (it, 12 * i + k + 5), ("i", "k"), (2, 7), 32),
    "gaps above two digits": ((2, 40), (it, 20 * i + 6 * j + k), ("i", "j", "k"), (2, 3, 4), 64),
    "a gap counted down": ((2, 24), (it, 23 - 12 * i - k), ("i", "k"), (2, 5), 32),
    "a gap in a 2-D loop": ((3, 80), (it, 40 * i + 20 * j + k), ("i", "j", "k"), (2, 2, 7), 96),
}


@pytest.mark.parametrize("case", PLACEABLE.values(), ids=PLACEABLE.keys())
def test_a_composed_fragment_holds_what_every_iteration_reads(case):
    shape, index, names, extents, threads = case
    read = access(shape, index)
    loop = default_partition(extents, threads, 0, names)
    inverse = invert_access(read, names, extents)
    assert inverse is not None
    frag = compose(loop, inverse, shape)
    assert frag.is_injective(), frag.describe()
    assert check(loop, frag, read) is None, frag.describe()


def test_the_inverse_is_read_off_the_digits():
    inverse = invert_access(access((3, 32), (it, 2 * j + k)), ("j", "k"), (16, 2))
    assert {d: str(e) for d, e in inverse.loop_of.items()} == {0: "j // 2", 1: "j % 2"}
    assert inverse.whole == (0,) and inverse.apart == ()
    reversed_ = invert_access(access((2, 32), (it, 31 - j)), ("j",), (32,))
    columns = np.arange(32)
    assert (reversed_.loop_of[0].evaluate({"j": columns}) == 31 - columns).all()


def test_a_digit_the_index_leaves_out_replicates_the_element():
    # x_frag[it, j // 2]: column c is read by iterations 2c and 2c + 1, so it lives on
    # the threads of both; the low digit of j is a replica digit
    read = access((3, 16), (it, j // 2))
    inverse = invert_access(read, ("j",), (32,))
    assert str(inverse.loop_of[0]) == "2*j" and inverse.spread == ((0, 1, 2),)
    loop = default_partition((32,), 64, 0, ("j",))
    frag = compose(loop, inverse, (3, 16))
    assert frag.describe() == "thread = 32*(rep // 2) + 2*j + rep % 2, slot = i, replicate 4 " \
                              "(threads 0..63)"
    holders = frag.threads_of((np.zeros(16, int), np.arange(16)))
    assert sorted(holders[:, 5]) == [10, 11, 42, 43]


def test_untouched_elements_are_told_apart_by_a_slot():
    # columns 0 and 1 map onto the iterations of columns 32 and 33: one slot further up
    read = access((3, 34), (it, j + 2))
    loop = default_partition((32,), 64, 0, ("j",))
    frag = compose(loop, invert_access(read, ("j",), (32,)), (3, 34))
    assert frag.describe() == ("thread = 32*rep + (j + 30) % 32, slot = 2*i + (j + 30) // 32, "
                               "replicate 2 (threads 0..63)")


def test_a_gap_between_digits_is_read_inside_its_window():
    # x_frag[it, 12*i + k] over k < 5 (issue #12): column c is iteration (c // 12, c % 12)
    # when c % 12 < 5; columns 5..11 of each 12 are untouched, folded onto k = c % 12 % 5
    # with the gap part c % 12 // 5 (0, 1 or 2) telling them apart by a slot
    read = access((3, 24), (it, 12 * i + k))
    inverse = invert_access(read, ("i", "k"), (2, 5))
    assert {d: str(e) for d, e in inverse.loop_of.items()} == {0: "j // 12", 1: "j % 12 % 5"}
    assert [(str(e), n) for e, n in inverse.apart] == [("j % 12 // 5", 3)]
    loop = default_partition((2, 5), 32, 0, ("i", "k"))
    frag = compose(loop, inverse, (3, 24))
    assert frag.describe() == ("thread = 10*rep + 5*(j // 12) + j % 12 % 5, "
                               "slot = 3*i + j % 12 // 5, replicate 3 (threads 0..31)")
    # the loop over the rest of each 12 (k + 5, k < 7) finds every column it reads on
    # the threads of the first loop's iteration (i, (k + 5) % 5)
    rest = access((3, 24), (it, 12 * i + k + 5))
    columns = 12 * np.arange(2)[:, None] + np.arange(5, 12)[None, :]
    holders = frag.threads_of((np.zeros(14, int), columns.ravel()))
    folded = (10 * np.arange(3)[:, None] + 5 * np.arange(2).repeat(7)[None, :]
              + np.tile(np.arange(5, 12) % 5, 2)[None, :])
    assert (holders == folded).all()
    assert invert_access(rest, ("i", "k"), (2, 7)) is not None


def test_a_write_through_a_reversed_index_runs_on_exactly_the_holders():
    write = access((2, 32), (it, 31 - j), write=True)
    loop = default_partition((32,), 128, 0, ("j",))
    frag = compose(loop, invert_access(write, ("j",), (32,)), (2, 32))
    assert check(loop, frag, write) is None


NOT_INVERTIBLE = {
    "overlapping terms": ((3, 3), (it, i + k), ("i", "k"), (2, 2)),
    "one variable in two dimensions": ((4, 4), (i, i), ("i",), (4,)),
    "a loop variable with a serial one": ((3, 34), (it, j + it), ("j",), (32,)),
    "a modulo that splits no digit off": ((3, 16), (it, j % 3), ("j",), (32,)),
    "digits that overlap": ((3, 16), (it, j % 4 + j // 2), ("j",), (16,)),
    "a product of variables": ((16,), (i * k,), ("i", "k"), (4, 4)),
    "leaving the fragment": ((3, 34), (it, j + 3), ("j",), (32,)),
}


@pytest.mark.parametrize("case", NOT_INVERTIBLE.values(), ids=NOT_INVERTIBLE.keys())
def test_an_index_without_an_inverse_places_nothing(case):
    shape, index, names, extents = case
    assert invert_access(access(shape, index), names, extents) is None

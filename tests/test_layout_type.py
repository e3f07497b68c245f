"""The Layout type and the default partition of docs/design.md §5, checked by brute force
on every (iteration, replica) point."""
import math

import numpy as np
import pytest

from verify_reducer.spec.indexexpr import Const, var
from verify_reducer.spec.layout import Layout, default_partition, fully_replicated

# (shape, participants, replicate, slots per thread, idle threads)
DESIGN_SHAPES = [
    ((8,), 128, 16, 1, 0),
    ((48,), 128, 2, 1, 32),          # threads 96..127 sit the loop out
    ((16, 3), 32, 1, 2, 0),          # 48 iterations: the second slot is partial
    ((1, 96), 128, 1, 1, 32),
    ((2, 48), 128, 1, 1, 32),
    ((256,), 128, 1, 2, 0),
    ((64, 16), 128, 1, 8, 0),
    ((3, 5), 7, 1, 3, 0),            # neither divides: 15 on 7
]


def reference_partition(shape, count):
    """docs/design.md §5 spelled out point by point: (thread, slot) per (replica, flat)."""
    n = math.prod(shape)
    flat = np.arange(n)
    if n >= count:
        return (flat % count)[None, :], flat // count
    r = count // n
    return np.arange(r)[:, None] * n + flat[None, :], np.zeros(n, dtype=np.int64)


@pytest.mark.parametrize("shape,count,replicate,slots,idle", DESIGN_SHAPES)
def test_default_partition_matches_design(shape, count, replicate, slots, idle):
    layout = default_partition(shape, count)
    threads, slot = reference_partition(shape, count)
    assert layout.replicate == replicate
    assert layout.slots_per_thread == slots
    assert np.array_equal(layout.threads_of(), threads)
    assert np.array_equal(layout.slots_of(), slot)
    assert layout.is_injective()
    index, rep = layout.inverse()
    assert index.shape == (count, slots)
    used = index >= 0
    assert used.sum() == layout.size * replicate       # every (x, r) lands exactly once
    assert (~used.any(axis=1)).sum() == idle           # threads with nothing to do
    # the inverse really inverts: thread/slot of (index, rep) is where we found it
    t, s = np.nonzero(used)
    x = np.unravel_index(index[t, s], shape)
    assert np.array_equal(layout.threads_of(x)[rep[t, s], np.arange(len(t))], t)
    assert np.array_equal(layout.slots_of(x), s)


def test_48_on_128_has_two_replicas_and_threads_96_to_127_idle():
    layout = default_partition((48,), 128)
    index, _ = layout.inverse()
    assert layout.describe() == "thread = 48*rep + i, slot = 0, replicate 2 (threads 0..127)"
    assert (index[96:] == -1).all() and (index[:96] >= 0).all()


def test_partial_last_slot_is_marked_unused():
    layout = default_partition((16, 3), 32)
    index, _ = layout.inverse()
    assert (index[:, 0] >= 0).all()
    assert (index[:16, 1] >= 0).all() and (index[16:, 1] == -1).all()


def test_rfc_minimal_layout_text():
    layout = default_partition((8,), 128, index_vars=("j",))
    assert layout.describe() == "thread = 8*rep + j, slot = 0, replicate 16 (threads 0..127)"


def test_warp_group_offset_is_absolute_only_on_request():
    layout = default_partition((64,), 128, offset=128)
    assert layout.participants == (128, 128)
    assert layout.threads_of().max() == 127
    assert layout.threads_of(absolute=True).min() == 128
    assert layout.describe().endswith("(threads 128..255)")


def test_threads_of_selected_indices():
    layout = default_partition((4, 8), 128)
    threads = layout.threads_of((np.array([0, 3]), np.array([1, 7])))
    assert threads.shape == (4, 2)
    assert list(threads[:, 0]) == [1, 33, 65, 97] and list(threads[:, 1]) == [31, 63, 95, 127]


def test_collision_names_two_points():
    # thread = i % 4 with one slot: iterations 0 and 4 collide
    bad = Layout((8,), ("i",), var("i") % 4, Const(0), 4)
    hit = bad.collision()
    assert hit == ((0, 0), (4, 0), 0, 0)
    with pytest.raises(ValueError):
        bad.inverse()


def test_fully_replicated_and_rename():
    layout = fully_replicated((2, 3), 4)
    assert layout.describe() == "thread = rep, slot = 3*i + j, replicate 4 (threads 0..3)"
    assert layout.is_injective()
    renamed = default_partition((8,), 128).rename(("rep",))
    assert renamed.rep_var != "rep" and str(renamed.thread) == "8*rep_ + rep"
    assert np.array_equal(renamed.threads_of(), default_partition((8,), 128).threads_of())


def test_layouts_are_frozen_plain_data():
    a, b = default_partition((8,), 128), default_partition((8,), 128)
    assert a == b and hash(a) == hash(b)
    with pytest.raises(Exception):
        a.replicate = 3


@pytest.mark.parametrize("kwargs", [
    dict(thread=var("i") + 1),                   # leaves [0, count)
    dict(slot=var("rep")),                       # slot may not depend on the replica
    dict(thread=var("q")),                       # unknown variable
])
def test_invalid_layouts_are_refused(kwargs):
    fields = dict(shape=(4,), index_vars=("i",), thread=var("i"), slot=Const(0), count=4)
    fields.update(kwargs)
    with pytest.raises(ValueError):
        Layout(**fields)

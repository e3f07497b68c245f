"""The vectorized loop partition (issue 11): spec.layout.vectorized_partition, the vector
width of a free loop (codegen.layout_vector), what it does to the streaming GEMV's reducer
storage, the strided replica numbering a projection of it needs, and its inverse as
formulas in the renderer."""
import math

import numpy as np
import pytest

from verify_reducer.codegen.lower.cells import inverse_of
from verify_reducer.codegen.layout import infer_layouts
from verify_reducer.codegen.layout_rules import project
from verify_reducer.codegen.plan import plan_func
from verify_reducer.spec import ir
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.layout import default_partition, vectorized_partition

HEADER = "import tilelang.language as T\n\n"


def kernel(body: str, params: str, threads: int) -> ir.PrimFunc:
    source = (HEADER + f"@T.prim_func\ndef main({params}):\n"
              f"    with T.Kernel(1, threads={threads}) as bx:\n"
              + "".join(f"        {line}\n" for line in body.strip("\n").splitlines()))
    return parse_source(source).func()


def loop_layout(func):
    (loop,) = [s for s in ir.walk(func.kernel.body) if isinstance(s, ir.ParallelFor)]
    return infer_layouts(func).loop(loop)


# ----------------------------------------------------------------------------- partition

@pytest.mark.parametrize("shape,count,vec", [((64, 256), 256, 8), ((32, 64), 128, 8),
                                             ((32, 64), 128, 4), ((3, 16), 4, 4)])
def test_vectorized_partition_is_tilelangs_formula(shape, count, vec):
    layout = vectorized_partition(shape, count, 0, None, vec)
    flat = np.arange(math.prod(shape))
    assert (layout.threads_of()[0] == (flat // vec) % count).all()
    assert (layout.slots_of() == (flat // (vec * count)) * vec + flat % vec).all()
    assert layout.is_injective()


def test_gemv_tile_holds_eight_rows_of_eight_consecutive_k():
    layout = vectorized_partition((64, 256), 256, 0, ("i", "k"), 8)
    assert layout.describe() == ("thread = 32*(i % 8) + k // 8, slot = 8*(i // 8) + k % 8, "
                                 "replicate 1 (threads 0..255)")
    rows = {int(i) for i, t in zip(np.unravel_index(np.arange(64 * 256), (64, 256))[0],
                                   layout.threads_of()[0]) if t == 0}
    assert len(rows) == 8


def test_fewer_vectors_than_threads_is_the_default_partition():
    assert vectorized_partition((8, 8), 32, 0, None, 4) == default_partition((8, 8), 32)
    assert vectorized_partition((64,), 32, 0, None, 1) == default_partition((64,), 32)


# ----------------------------------------------------------------------------- width

def width(index: str, extents: str = "32, 64", dtype: str = "T.float16",
          threads: int = 128) -> int:
    """The vector size of a free loop reading A at `index`: the slots one thread runs
    consecutively along k."""
    func = kernel(f"""
acc = T.alloc_reducer((32,), T.float32, op="sum")
T.reducer_init(acc)
for i, k in T.Parallel({extents}):
    T.reducer_update(acc[i], T.cast(A[{index}], T.float32))
y_frag = T.alloc_fragment((32,), T.float32)
T.finalize_reducer(acc, y_frag)
T.copy(y_frag, out[0:32])
""", f"A: T.Tensor((64, 64), {dtype}), out: T.Tensor((32,), T.float32)", threads)
    layout = loop_layout(func)
    slots = layout.slots_of().reshape(layout.shape)
    run = 1
    while run < layout.shape[-1] and (slots[:, run] == slots[:, 0] + run).all():
        run += 1
    return run


def test_width_is_sixteen_bytes_of_the_widest_element():
    assert width("i, k") == 8
    assert width("i, k", dtype="T.float32") == 4
    assert width("i, k + 8") == 8                 # an offset free of k keeps the runs


def test_width_is_one_where_k_does_not_run_along_the_last_dimension():
    assert width("k, i") == 1                     # transposed
    assert width("i, 2 * (k // 2)", extents="32, 32") == 1   # not k itself
    assert width("i + k, k", extents="32, 32") == 1          # k also in another dimension


def test_width_halves_to_divide_the_extent_and_feed_every_thread():
    assert width("i, k", extents="32, 4", threads=32) == 4    # 8 does not divide 4
    assert width("i, k", extents="32, 64", threads=512) == 4   # 2048 / 8 < 512


# ----------------------------------------------------------------------------- GEMV

GEMV = """
A_shared = T.alloc_shared((32, 64), T.float16)
A_frag = T.alloc_fragment((32, 64), T.float16)
x_frag = T.alloc_fragment((64,), T.float16)
acc = T.alloc_reducer((32,), T.float32, op="sum")
T.reducer_init(acc)
T.copy(A[0, 0], A_shared)
T.copy(A_shared, A_frag)
T.copy(x[0], x_frag)
for i, k in T.Parallel(32, 64):
    T.reducer_update(acc[i], T.cast(A_frag[i, k], T.float32) * T.cast(x_frag[k], T.float32))
y_frag = T.alloc_fragment((32,), T.float32)
T.finalize_reducer(acc, y_frag)
T.copy(y_frag, y[0])
"""
GEMV_PARAMS = ("A: T.Tensor((32, 64), T.float16), x: T.Tensor((64,), T.float16), "
               "y: T.Tensor((32,), T.float32)")


def test_gemv_keeps_two_partials_per_thread_instead_of_sixteen():
    func = kernel(GEMV, GEMV_PARAMS, 128)
    assert loop_layout(func).describe() == (
        "thread = 8*(i % 16) + k // 8, slot = 8*(i // 16) + k % 8, "
        "replicate 1 (threads 0..127)")
    (reducer,) = plan_func(func, "canonical").reducers
    assert reducer.storage.describe() == \
        "thread = 8*(i % 16) + rep, slot = i // 16, replicate 8 (threads 0..127)"


def test_projection_numbers_replicas_with_a_stride():
    # replicas of acc[i] are the 64 values of k; the 8 holders are every 8th of them
    loop = vectorized_partition((32, 64), 128, 0, ("i", "k"), 8)
    storage = project(loop, (0,), (32,))
    assert storage.describe() == \
        "thread = 8*(i % 16) + rep, slot = 8*(i // 16), replicate 8 (threads 0..127)"
    assert storage.is_injective()


def test_inverse_of_a_vectorized_layout_is_a_formula():
    layout = vectorized_partition((64, 256), 256, 0, ("i", "k"), 8)
    inverse = inverse_of(layout)
    assert inverse.table is None
    assert [str(e) for e in inverse.indices] == ["$t // 32 + 8*($s // 8)",
                                                 "8*($t % 32) + $s % 8"]
    index, _ = layout.inverse()
    t, s = np.meshgrid(np.arange(256), np.arange(64), indexing="ij")
    env = {"$t": t, "$s": s}
    i, k = (np.broadcast_to(e.evaluate(env), t.shape) for e in inverse.indices)
    assert (index == i * 256 + k).all()

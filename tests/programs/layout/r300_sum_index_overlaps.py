# expect: error R300 at 24:42
#
# The issue #12 shape read at a sum whose terms overlap: x_frag[it, i + k] over a
# T.Parallel(2, 2) touches column 1 from two iterations, (0, 1) and (1, 0), and columns
# 0 and 2 from one each. The index has no inverse (TileLang's needs a bijective iterator
# map too), so the loop cannot place x_frag (codegen/layout_inverse.py): column 1 would
# need twice the holders of columns 0 and 2, and no replica numbering gives that. The
# copy's default partition moves each column's holders with the row, which the loop
# cannot follow; no root of the search gives a clean placement, so R300 names both
# demands: the loop's layout and the copy's placement of x_frag.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((3, 3), T.float32), out: T.Tensor((3,), T.float32)):
    with T.Kernel(1, threads=64) as bx:
        x_frag = T.alloc_fragment((3, 3), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        for it in T.serial(3):
            T.reducer_init(acc)
            for i, k in T.Parallel(2, 2):
                T.reducer_update(acc[0], x_frag[it, i + k])  # <- R300
            T.finalize_reducer(acc, result)
            out[it] = result[0]

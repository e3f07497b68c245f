# expect: error R209 at 15
#
# Legacy surface, 2-D: `acc[i, j + 1]` reaches column 4 of a 4x4 reducer when j = 3.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((4, 4), T.float32), out: T.Tensor((4, 4), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((4, 4), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((4, 4), T.float32, op="sum", replication="all")
        T.clear(acc)
        for i, j in T.Parallel(4, 4):
            acc[i, j + 1] += x_frag[i, j]  # <- R209
        T.finalize_reducer(acc)
        T.copy(acc, out)

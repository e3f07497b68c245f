# expect: error R205 at 18
#
# The RFC's `acc[i] = unrelated_expression`: a store of a value computed without the
# reducer is no update of a sum (each replica would overwrite its partial with it).
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.clear(acc)
        for j in T.Parallel(N):
            acc[0] = x_frag[j] * x_frag[j] + 1.0  # <- R205
        T.finalize_reducer(acc)
        T.copy(acc, out)

# expect: error R206 at 17
#
# The update form does not match the reducer's op: a T.max store into a sum reducer.
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
            acc[0] = T.max(acc[0], x_frag[j])  # <- R206
        T.finalize_reducer(acc)
        T.copy(acc, out)

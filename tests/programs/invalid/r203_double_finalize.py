# expect: error R203 at 22
#
# The same epoch is finalized twice: the second collective would combine already
# combined values (for a sum, 128 times the result).
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])
        r1 = T.alloc_fragment((1,), T.float32)
        r2 = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, r1)
        T.finalize_reducer(acc, r2)  # <- R203
        T.copy(r2, out)

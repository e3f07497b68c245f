# expect: error R200 at 19
#
# The reducer is read as a value before it is finalized: its partials are private,
# incoherent per-thread state until the collective, so `acc[0]` means nothing here.
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
        out[0] = acc[0]  # <- R200
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)

# expect: error R207 at 21
#
# Finalize inside a T.Parallel body: each iteration may run on a different thread, so the
# collective sits in per-thread control flow (here a whole epoch per iteration). Finalize
# belongs after the loop, at block level.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        for j in T.Parallel(N):
            T.reducer_init(acc)
            T.reducer_update(acc[0], x_frag[j])
            T.finalize_reducer(acc, result)  # <- R207
        T.copy(result, out)

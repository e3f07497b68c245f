# expect: error R207 at 22
#
# Finalize under a condition on fragment values: a fragment holds per-thread values, so
# the condition may differ between threads and the collective is not reached uniformly.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        T.fill(result, 0.0)
        if x_frag[0] > 0:
            T.reducer_init(acc)
            for j in T.Parallel(N):
                T.reducer_update(acc[0], x_frag[j])
            T.finalize_reducer(acc, result)  # <- R207
        T.copy(result, out)

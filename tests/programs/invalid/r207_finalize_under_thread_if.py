# expect: error R207 at 23
# expect: error R207 at 25
#
# Finalize under a condition on the thread index: the collective needs every participant,
# so threads 0..63 would wait for 64..127 forever (or reduce garbage). Both arms are
# divergent, so both finalizes are reported.
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
        result = T.alloc_fragment((1,), T.float32)
        if T.get_thread_binding() < 64:
            T.finalize_reducer(acc, result)  # <- R207
        else:
            T.finalize_reducer(acc, result)  # <- R207
        T.copy(result, out)

# expect: error R214 at 19
#
# The finalize destination has 4 elements but the reducer has 8 outputs.
import tilelang.language as T

N = 64


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((4,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((8,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[j % 8], x_frag[j])
        result = T.alloc_fragment((4,), T.float32)
        T.finalize_reducer(acc, result)  # <- R214
        T.copy(result, out)

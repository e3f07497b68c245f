# expect: error R214 at 20
#
# The finalize destination is float16 but the reducer accumulates float32: finalize does
# not convert. Finalize into a float32 fragment and cast afterwards.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float16)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])
        result = T.alloc_fragment((1,), T.float16)
        T.finalize_reducer(acc, result)  # <- R214
        T.copy(result, out)

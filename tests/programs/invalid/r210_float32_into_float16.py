# expect: error R210 at 18
#
# A float32 contribution into a float16 reducer narrows without a cast (precision is lost
# before the reduction even starts). Cast explicitly, or accumulate in float32.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float16)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float16, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])  # <- R210
        result = T.alloc_fragment((1,), T.float16)
        T.finalize_reducer(acc, result)
        T.copy(result, out)

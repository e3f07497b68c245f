# expect: ok
# input: x=arange(0, 48)
# expect: result out=[3.0, 12.0, 21.0, 30.0, 39.0, 48.0, 57.0, 66.0, 75.0, 84.0, 93.0, 102.0, 111.0, 120.0, 129.0, 138.0]
#
# A 16x3 loop on 32 threads: 48 iterations neither divide nor are divided by 32, so the
# second slot of every thread is only half used (threads 16..31 have no second iteration).
import tilelang.language as T

R = 16
C = 3


@T.prim_func
def main(x: T.Tensor((R, C), T.float32), out: T.Tensor((R,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        x_frag = T.alloc_fragment((R, C), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((R,), T.float32, op="sum")
        T.reducer_init(acc)
        for i, j in T.Parallel(R, C):
            T.reducer_update(acc[i], x_frag[i, j])
        result = T.alloc_fragment((R,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)

# expect: ok
# input: x=arange(0, 96)
# expect: result out=[1128.0, 3432.0]
#
# Serial rows on a participant count that is not a power of two: 48 columns on 96
# threads, two replicas of each column. Row r sums to 2304*r + 1128.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((2, 48), T.float32), out: T.Tensor((2,), T.float32)):
    with T.Kernel(1, threads=96) as bx:
        x_frag = T.alloc_fragment((2, 48), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        for r in T.serial(2):
            T.reducer_init(acc)
            for j in T.Parallel(48):
                T.reducer_update(acc[0], x_frag[r, j])
            T.finalize_reducer(acc, result)
            out[r] = result[0]

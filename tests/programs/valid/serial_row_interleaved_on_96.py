# expect: ok
# input: x=arange(0, 96)
# expect: result out=[[552.0, 576.0], [1704.0, 1728.0]]
#
# Serial rows read at an interleaved sum on a participant count that is not a power of
# two: x_frag[r, i + 2*k] in a T.Parallel(2, 24) on 96 threads (48 iterations, two
# replicas each). acc[i] sums the even (i = 0) or odd (i = 1) columns of row r:
# out[r, i] = 1152*r + 24*i + 552.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((2, 48), T.float32), out: T.Tensor((2, 2), T.float32)):
    with T.Kernel(1, threads=96) as bx:
        x_frag = T.alloc_fragment((2, 48), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((2,), T.float32, op="sum")
        halves = T.alloc_fragment((2,), T.float32)
        for r in T.serial(2):
            T.reducer_init(acc)
            for i, k in T.Parallel(2, 24):
                T.reducer_update(acc[i], x_frag[r, i + 2 * k])
            T.finalize_reducer(acc, halves)
            T.copy(halves, out[r, 0:2])

# expect: ok
# input: x=arange(0, 32)
# expect: result out=[[28.0, 92.0], [156.0, 220.0]]
#
# Serial rows read through digits of one loop variable, the index shape `verify-reducer
# fuzz` generates for interleaved rows: x_frag[it, (k % 2)*8 + k // 2] in a
# T.Parallel(16) on 128 threads. The digits swap places, so the loop places column c on
# the threads running k = 2*(c % 8) + c // 8. acc[0] sums columns 0..7 of row it,
# acc[1] columns 8..15: out[r] = [128*r + 28, 128*r + 92].
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((2, 16), T.float32), out: T.Tensor((2, 2), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((2, 16), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((2,), T.float32, op="sum")
        halves = T.alloc_fragment((2,), T.float32)
        for it in T.serial(2):
            T.reducer_init(acc)
            for k in T.Parallel(16):
                T.reducer_update(acc[k % 2], x_frag[it, (k % 2) * 8 + k // 2])
            T.finalize_reducer(acc, halves)
            T.copy(halves, out[it, 0:2])

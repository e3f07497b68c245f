# expect: ok
# input: x=arange(0, 64)
# expect: result y=[[62.0, 60.0, 58.0, 56.0, 54.0, 52.0, 50.0, 48.0, 46.0, 44.0, 42.0, 40.0, 38.0, 36.0, 34.0, 32.0, 30.0, 28.0, 26.0, 24.0, 22.0, 20.0, 18.0, 16.0, 14.0, 12.0, 10.0, 8.0, 6.0, 4.0, 2.0, 0.0], [126.0, 124.0, 122.0, 120.0, 118.0, 116.0, 114.0, 112.0, 110.0, 108.0, 106.0, 104.0, 102.0, 100.0, 98.0, 96.0, 94.0, 92.0, 90.0, 88.0, 86.0, 84.0, 82.0, 80.0, 78.0, 76.0, 74.0, 72.0, 70.0, 68.0, 66.0, 64.0]]
# expect: result out=[992.0, 3040.0]
#
# A serial-row loop that writes a fragment at a negative coefficient: y_frag[it, 31 - j]
# = 2 * x_frag[it, j] on 128 threads (each column on four). The loop places y_frag
# through the inverse j = 31 - column, so exactly the threads running j hold the element
# it writes and no replica goes stale; the whole-tile copy out reads any of them.
# y is x doubled with each row reversed; out[r] = 2048*r + 992.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((2, 32), T.float32), y: T.Tensor((2, 32), T.float32),
         out: T.Tensor((2,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((2, 32), T.float32)
        y_frag = T.alloc_fragment((2, 32), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        for it in T.serial(2):
            T.reducer_init(acc)
            for j in T.Parallel(32):
                y_frag[it, 31 - j] = x_frag[it, j] * 2.0
                T.reducer_update(acc[0], y_frag[it, 31 - j])
            T.finalize_reducer(acc, result)
            out[it] = result[0]
        T.copy(y_frag, y)

# expect: ok
# input: x=arange(0, 96)
# expect: result y=[0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0, 24.0, 26.0, 28.0, 30.0, 32.0, 34.0, 36.0, 38.0, 40.0, 42.0, 44.0, 46.0, 48.0, 50.0, 52.0, 54.0, 56.0, 58.0, 60.0, 62.0, 64.0, 66.0, 68.0, 70.0, 72.0, 74.0, 76.0, 78.0, 80.0, 82.0, 84.0, 86.0, 88.0, 90.0, 92.0, 94.0, 96.0, 98.0, 100.0, 102.0, 104.0, 106.0, 108.0, 110.0, 112.0, 114.0, 116.0, 118.0, 120.0, 122.0, 124.0, 126.0, 128.0, 130.0, 132.0, 134.0, 136.0, 138.0, 140.0, 142.0, 144.0, 146.0, 148.0, 150.0, 152.0, 154.0, 156.0, 158.0, 160.0, 162.0, 164.0, 166.0, 168.0, 170.0, 172.0, 174.0, 176.0, 178.0, 180.0, 182.0, 184.0, 186.0, 188.0, 190.0]
# expect: result out=[992.0, 3040.0, 5088.0]
#
# A loop in a serial loop that writes a fragment row by row: y_frag[it, j] is placed by
# the loop like the row it reads (each thread running column j holds the whole column),
# so every replica is written, and the whole-tile copy out reads any of them.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((3, 32), T.float32), y: T.Tensor((3, 32), T.float32),
         out: T.Tensor((3,), T.float32)):
    with T.Kernel(1, threads=64) as bx:
        x_frag = T.alloc_fragment((3, 32), T.float32)
        y_frag = T.alloc_fragment((3, 32), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        for it in T.serial(3):
            T.reducer_init(acc)
            for j in T.Parallel(32):
                y_frag[it, j] = x_frag[it, j] * 2.0
                T.reducer_update(acc[0], y_frag[it, j])
            T.finalize_reducer(acc, result)
            out[it] = result[0]
        T.copy(y_frag, y)

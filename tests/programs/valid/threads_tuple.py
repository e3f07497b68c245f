# expect: ok
# input: x=[1, 2, 3, 4]
# expect: result out=[[[1, 2, 3, 4], [11, 12, 13, 14]], [[101, 102, 103, 104], [111, 112, 113, 114]]]
#
# threads= as a tuple (X, Y, Z), TileLang's thread-block shape: T.get_thread_binding(d)
# is threadIdx.x, .y, .z, numbered x fastest (linear thread x + X·(y + Y·z)). Every
# thread stores one element of out[z, y, x].
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((4,), T.float32), out: T.Tensor((2, 2, 4), T.float32)):
    with T.Kernel(1, threads=(4, 2, 2)):
        tx = T.get_thread_binding(0)
        ty = T.get_thread_binding(1)
        tz = T.get_thread_binding(2)
        out[tz, ty, tx] = x[tx] + T.cast(10 * ty + 100 * tz, T.float32)

# expect: ok
# input: x=arange(0, 256)
# expect: result out=[2016.0, 6112.0, 10208.0, 14304.0]
#
# The issue #12 shape with 128 threads: x_frag (4, 64) read as x_frag[r, j] inside a
# T.Parallel(64) in a serial loop over r. The copy adopts the loop's layout (column j on
# threads j and 64 + j, one slot per row). Row r sums to 4096*r + 2016.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((4, 64), T.float32), out: T.Tensor((4,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((4, 64), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        for r in T.serial(4):
            T.reducer_init(acc)
            for j in T.Parallel(64):
                T.reducer_update(acc[0], x_frag[r, j])
            T.finalize_reducer(acc, result)
            out[r] = result[0]

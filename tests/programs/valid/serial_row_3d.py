# expect: ok
# input: x=arange(0, 192)
# expect: result out=[496.0, 1520.0, 2544.0, 3568.0, 4592.0, 5616.0]
#
# A 3-D fragment read by two nested serial loops: x_frag[a, b, j] inside a
# T.Parallel(32) on 64 threads. Each thread running column j keeps all 2*3 rows of it
# (six slots). One epoch per (a, b): out[a, b] = 3072*a + 1024*b + 496.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((2, 3, 32), T.float32), out: T.Tensor((2, 3), T.float32)):
    with T.Kernel(1, threads=64) as bx:
        x_frag = T.alloc_fragment((2, 3, 32), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        for a in T.serial(2):
            for b in T.serial(3):
                T.reducer_init(acc)
                for j in T.Parallel(32):
                    T.reducer_update(acc[0], x_frag[a, b, j])
                T.finalize_reducer(acc, result)
                out[a, b] = result[0]

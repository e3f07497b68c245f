# expect: ok
# input: x=arange(0, 96)
# expect: result out=[496.0, 1520.0, 2544.0]
#
# A fragment copied whole, then read one row per iteration of a serial loop inside a
# T.Parallel over the columns (issue #12). The loop's 32 iterations run twice on 64
# threads, so x_frag is placed by the loop, not by the copy: every thread running
# column j keeps the whole column (x_frag replicated twice, one slot per row), and the
# copy writes both replicas. One epoch per iteration: row r sums to 1024*r + 496.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((3, 32), T.float32), out: T.Tensor((3,), T.float32)):
    with T.Kernel(1, threads=64) as bx:
        x_frag = T.alloc_fragment((3, 32), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        for it in T.serial(3):
            T.reducer_init(acc)
            for j in T.Parallel(32):
                T.reducer_update(acc[0], x_frag[it, j])
            T.finalize_reducer(acc, result)
            out[it] = result[0]

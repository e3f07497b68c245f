# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result out=[36.0]
#
# The reproducer of TileLang PR #2881, verbatim in shape: legacy reducer, in-place
# finalize, then one thread (T.get_thread_binding() == 0) stores the finalized total.
# After finalize every thread holds the same value, so a single writer is enough.
import tilelang.language as T

BD = 8
THREADS = 128


@T.prim_func
def main(x: T.Tensor((BD,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=THREADS):
        x_frag = T.alloc_fragment((BD,), T.float32)
        T.copy(x, x_frag)

        total = T.alloc_reducer((1,), T.float32, replication="all")
        T.fill(total, 0.0)
        for j in T.Parallel(BD):
            total[0] += x_frag[j]
        T.finalize_reducer(total)

        if T.get_thread_binding() == 0:
            out[0] = total[0]

# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result out=[36.0]
#
# The RFC's minimal wrong-code example (TileLang #2408), written in the legacy v1 surface:
# a fully replicated reducer, T.fill as the epoch start, `+=` updates and an in-place
# finalize. T.Parallel(8) on 128 threads is replicated 16 times, so the old lowering let
# every replica add x[j] and returned 16 * 36 = 576. Each logical contribution counts
# once: the answer is 36.
import tilelang.language as T

BD = 8
THREADS = 128


@T.prim_func
def main(x: T.Tensor((BD,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((BD,), T.float32)
        T.copy(x, x_frag)

        total = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.fill(total, 0.0)
        for j in T.Parallel(BD):
            total[0] += x_frag[j]
        T.finalize_reducer(total)

        T.copy(total, out)

# expect: error R100 at 17
#
# A thread-private local buffer indexed by a T.Parallel loop variable: TileLang 0.1.15
# refuses the kernel ("[Tilelang Semantic Check] Local buffer `p` is indexed by
# T.Parallel loop variable `i`", tilelang/analysis/parallel_local_index_checker.py; the
# H200 run of 2026-12-03 met it), since local buffers take no part in a parallel loop's
# layout. So do we, at the access. Fill p in a T.serial loop instead.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), y: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=32):
        t = T.get_thread_binding(0)
        p = T.alloc_local((8,), T.float32)
        for i in T.Parallel(8):
            p[i] = x[i] * 2.0  # <- R100
        if t < 8:
            y[t] = p[7 - t]

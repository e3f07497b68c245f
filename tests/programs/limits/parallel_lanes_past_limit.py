# expect: error R102 at 13:9
#
# Issue 24: T.Parallel(2**26) on 1024 threads was legal and took 17 s and 2 GB in
# layout inference before the memory estimate refused it. A T.Parallel nest may run at
# most 2**20 lanes (docs/limits.md); this one runs 2**23.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((2**23,), T.float32), y: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=1024) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for i in T.Parallel(2**23):
            T.reducer_update(acc[0], x[i])
        T.finalize_reducer(acc)
        y[0] = acc[0]

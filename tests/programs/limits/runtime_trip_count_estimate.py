# expect: ok
# input: n=[5]
#
# Issue 24: a trip count read at run time was estimated at its dtype's range (2**31
# contributions, 128 GiB), so check refused it under the default --max-memory. The
# estimate now counts such a loop at the limit the run enforces (2**14 runs of its
# body, docs/limits.md).
import tilelang.language as T


@T.prim_func
def main(n: T.Tensor((1,), T.int32), x: T.Tensor((8,), T.float32),
         y: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for k in T.serial(n[0]):
            T.reducer_update(acc[0], x[k % 8])
        T.finalize_reducer(acc)
        y[0] = acc[0]

# expect: error R102 at 13:9
#
# Issue 24: a reducer of 10**7 elements over 128 threads made the planner build a
# layout of every element in every thread (1.28e9 cells, a 9.5 GiB array: exit 4). A
# reducer's elements times the kernel's threads may be at most 2**20 (docs/limits.md);
# here 2**16 × 128 = 2**23.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), y: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_reducer((2**16,), T.float32, op="sum")
        for j in T.Parallel(8):
            T.reducer_update(acc[j], x[j])
        T.finalize_reducer(acc)
        for j in T.Parallel(8):
            y[j] = acc[j]

# expect: error R220 at 22
# for-all: N in 1..4096
#
# The reducer is finalized in place inside the loop and read after it. At the file's
# N = 64 the loop runs 4 times; for N < 16 it runs zero times and the read after the
# loop sees a reducer that was never finalized (R200 on that path). The family proof
# finds the smallest such N: N=1.
import tilelang.language as T

N = 64
TILE = 16
THREADS = 32


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=THREADS) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        for t in T.serial(N // TILE):
            T.clear(acc)
            for j in T.Parallel(TILE):
                acc[0] += x[t * TILE + j]
            T.finalize_reducer(acc)
        out[0] = acc[0]

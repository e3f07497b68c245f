# expect: error R220 at 17
# for-all: N in 1..1048576
#
# The length of out goes through int(N / 2): a true division the symbolic sizes do not
# follow, so the family check finds a shape that differs between two members and
# refuses to prove anything (R220).
import tilelang.language as T

N = 64
TILE = 16
THREADS = 32
dtype = T.float32
HALF = int(N / 2)


@T.prim_func
def main(x: T.Tensor((N,), dtype), out: T.Tensor((HALF,), dtype)):
    with T.Kernel(1, threads=THREADS) as bx:
        acc = T.alloc_reducer((1,), dtype, op="sum")
        res = T.alloc_fragment((1,), dtype)
        T.reducer_init(acc)
        for t in T.serial(T.ceildiv(N, TILE)):
            for j in T.Parallel(TILE):
                T.reducer_update(acc[0], T.if_then_else(t * TILE + j < N, x[t * TILE + j], 0.0))
        T.finalize_reducer(acc, res)
        out[0] = res[0]

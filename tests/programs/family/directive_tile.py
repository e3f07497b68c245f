# expect: error R110 at 2:26
# for-all: N in 1..4096, TILE in 1..64
#
# TILE is the extent of a T.Parallel loop: tile sizes and thread counts stay concrete.
import tilelang.language as T

N = 64
TILE = 16
THREADS = 32
dtype = T.float32


@T.prim_func
def main(x: T.Tensor((N,), dtype), out: T.Tensor((1,), dtype)):
    with T.Kernel(1, threads=THREADS) as bx:
        acc = T.alloc_reducer((1,), dtype, op="sum")
        res = T.alloc_fragment((1,), dtype)
        T.reducer_init(acc)
        for t in T.serial(T.ceildiv(N, TILE)):
            for j in T.Parallel(TILE):
                T.reducer_update(acc[0], T.if_then_else(t * TILE + j < N, x[t * TILE + j], 0.0))
        T.finalize_reducer(acc, res)
        T.copy(res, out)

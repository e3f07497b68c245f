# expect: error R110 at 4:12
# expect: error R110 at 5:11
# expect: error R110 at 10:1
# for-all: N in 64..1
# assume: N +
#
# Size-family directives that cannot mean anything: an empty range, an assumption that
# does not parse, and a directive after the first line of code.
import tilelang.language as T
# for-all: N in 1..8
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

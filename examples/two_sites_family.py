# expect: ok
# for-all: A_N in 1..1048576, B_N in 1..1048576
#
# The RFC's two-site example (examples/two_sites_8_16.py) over inputs of any length:
# a is read in tiles of 8 by an 8-wide loop, b in tiles of 16 by a 16-wide loop, both
# tails masked with T.if_then_else, and both sites feed the one output. The family
# proof shows that every a[j] and every b[k] enters acc exactly once for every A_N and
# B_N up to 2**20 (docs/design.md §21).
import tilelang.language as T

A_N = 20
B_N = 40
A_TILE = 8
B_TILE = 16
THREADS = 128


@T.prim_func
def main(
    a: T.Tensor((A_N,), T.float32),
    b: T.Tensor((B_N,), T.float32),
    out: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=THREADS) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        T.reducer_init(acc)
        for t in T.serial(T.ceildiv(A_N, A_TILE)):
            for j in T.Parallel(A_TILE):
                T.reducer_update(acc[0], T.if_then_else(t * A_TILE + j < A_N,
                                                        a[t * A_TILE + j], 0.0))
        for t in T.serial(T.ceildiv(B_N, B_TILE)):
            for k in T.Parallel(B_TILE):
                T.reducer_update(acc[0], T.if_then_else(t * B_TILE + k < B_N,
                                                        b[t * B_TILE + k], 0.0))
        T.finalize_reducer(acc, result)
        T.copy(result, out)

# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_clamp.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: clamp_within_bounds; params: N=8192, block_N=128, dtype=T.float32, min_val=0.25, max_val=0.75
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, T.clamp
# blocked-by: factory-param-without-default
# expect: error R102 at 14
# bound-blocked-by: none
# bound: ok
import tilelang.testing
from tilelang import language as T


def clamp_within_bounds(
    N,
    block_N,
    dtype,
    min_val=None,
    max_val=None,
):
    import tilelang.language as T

    @T.prim_func
    def main(
        A: T.Tensor((N,), dtype),
        B: T.Tensor((N,), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), threads=block_N) as bx:
            A_shared = T.alloc_shared([block_N], dtype)
            T.copy(A[bx * block_N], A_shared)
            for i in T.Parallel(block_N):
                A_shared[i] = T.clamp(A_shared[i], min_val=min_val, max_val=max_val)
            T.copy(A_shared, B[bx * block_N])

    return main

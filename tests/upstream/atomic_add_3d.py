# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_atomic.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: atomic_add_program; params: K=4, M=64, N=64, block_M=32, block_N=32, dtype=T.float32
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, atomic_add, copy-slice
# blocked-by: factory-param-without-default
# expect: error R102 at 15
# bound-blocked-by: none
# bound: ok
import tilelang.testing
import tilelang.layout
import tilelang.language as T


@tilelang.jit
def atomic_add_program(K, M, N, block_M, block_N, dtype=T.float32):
    @T.prim_func
    def atomic_add(A: T.Tensor((K, M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), K, threads=32) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_N), dtype)

            T.copy(A[bz, bx * block_M : (bx + 1) * block_M, by * block_N : (by + 1) * block_N], A_shared)

            for i, j in T.Parallel(block_M, block_N):
                T.atomic_add(B[bx * block_M + i, by * block_N + j], A_shared[i, j])

    return atomic_add

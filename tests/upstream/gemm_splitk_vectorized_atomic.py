# upstream: tile-ai/tilelang examples/gemm_splitk/example_tilelang_gemm_splitk_vectorize_atomicadd.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: matmul; params: M=256, N=256, K=256, block_M=128, block_N=128, block_K=32, split_k=4
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, eager-jit, atomic_add, gemm, T.Pipelined
# blocked-by: factory-param-without-default
# expect: error R102 at 14
# bound-blocked-by: none
# bound: ok
import tilelang
import tilelang.language as T


@tilelang.jit
def matmul(A, B, C, block_M, block_N, block_K, split_k, dtype=T.float16, accum_dtype=T.float32, out_dtype=T.float32):
    M, N, K = T.const("M, N, K")
    splitK = K // split_k

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C: T.Tensor((M, N), out_dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=128) as (bx, by, bz):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

        T.clear(C_local)
        for ko in T.Pipelined(T.ceildiv(splitK, block_K), num_stages=0):
            T.copy(A[by * block_M, bz * splitK + ko * block_K], A_shared)
            T.copy(B[bz * splitK + ko * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)

        T.atomic_add(C[by * block_M, bx * block_N], C_local)

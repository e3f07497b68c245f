# upstream: tile-ai/tilelang examples/gemv/example_gemv.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: naive_gemv; params: N=1024, K=1024, BLOCK_N=128, BLOCK_K=128
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, eager-jit, get_thread_binding(dim), alloc_local, astype
# blocked-by: factory-param-without-default
# expect: error R102 at 18
# bound-blocked-by: none
# bound: ok
import tilelang as tl
import tilelang.language as T
from tilelang import jit


@tl.jit
def naive_gemv(
    A,
    B,
    BLOCK_N: int,
    BLOCK_K: int,
    dtype: T.dtype = T.float16,
    accum_dtype: T.dtype = T.float,
):
    N, K = T.const("N, K")
    A: T.Tensor((K,), dtype)
    B: T.Tensor((N, K), dtype)
    C = T.empty((N,), dtype)

    with T.Kernel(T.ceildiv(N, BLOCK_N)) as bn:
        tn = T.get_thread_binding(0)  # tn = threadIdx.x
        A_shared = T.alloc_shared((BLOCK_K,), dtype)
        B_shared = T.alloc_shared((BLOCK_N, BLOCK_K), dtype)
        C_reg = T.alloc_local((1,), accum_dtype)
        T.clear(C_reg)
        for bk in T.serial(T.ceildiv(K, BLOCK_K)):
            for tk in T.serial(BLOCK_K):
                A_shared[tk] = A[bk * BLOCK_K + tk]
                B_shared[tn, tk] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk]
            for tk in T.serial(BLOCK_K):
                C_reg[0] += A_shared[tk].astype(accum_dtype) * B_shared[tn, tk].astype(accum_dtype)
        C[bn * BLOCK_N + tn] = C_reg[0]

    return C

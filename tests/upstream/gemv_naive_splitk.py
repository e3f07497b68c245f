# upstream: tile-ai/tilelang examples/gemv/example_gemv.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: naive_splitk_gemv; params: N=1024, K=1024, BLOCK_N=128, BLOCK_K=8
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, eager-jit, threads-tuple, get_thread_binding(dim), alloc_local, astype, atomic_add
# blocked-by: factory-param-without-default
# expect: error R102 at 18
# bound-blocked-by: none
# bound: ok
import tilelang as tl
import tilelang.language as T
from tilelang import jit


@tl.jit
def naive_splitk_gemv(
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

    with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, BLOCK_K)) as bn:
        tn = T.get_thread_binding(0)
        tk = T.get_thread_binding(1)
        A_local = T.alloc_local((1,), dtype)
        B_local = T.alloc_local((1,), dtype)
        C_accum = T.alloc_local((1,), accum_dtype)
        C_shared = T.alloc_shared((BLOCK_N,), accum_dtype)
        if tk == 0:
            C_shared[tn] = 0
        T.clear(C_accum)
        for bk in T.serial(T.ceildiv(K, BLOCK_K)):
            A_local[0] = A[bk * BLOCK_K + tk]
            B_local[0] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk]
            C_accum[0] += A_local[0].astype(accum_dtype) * B_local[0].astype(accum_dtype)
        T.atomic_add(C_shared[tn], C_accum[0])
        C[bn * BLOCK_N + tn] = C_shared[tn]

    return C

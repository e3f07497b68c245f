# upstream: tile-ai/tilelang examples/gemv/example_gemv.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: gemv_alloc_reducer; params: M=1024, N=1024; defaults kept: block_M=128, block_N=128, num_stages=2, threads=256
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, helper-fn, eager-jit, reducer-v1, T.Pipelined
# blocked-by: factory-param-without-default
# expect: error R102 at 37
# bound-blocked-by: none
# bound: ok
import tilelang as tl
import tilelang.language as T
from tilelang.autotuner import autotune
from tilelang import jit
import itertools


def get_block_template_configs():
    iter_params = dict(
        block_M=[2, 4, 8, 32, 64, 128], block_N=[2, 4, 8, 32, 64, 128], num_stages=[0, 1, 2, 3, 4], threads=[32, 64, 128, 256]
    )
    return [dict(zip(iter_params, values)) for values in itertools.product(*iter_params.values())]


@tl.autotune(
    configs=get_block_template_configs(),
    warmup=3,
    rep=20,
)
@tl.jit(
    pass_configs={
        tl.PassConfigKey.TL_DISABLE_TMA_LOWER: True,
        tl.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
    },
)
def gemv_alloc_reducer(
    a, x, block_M=128, block_N=128, num_stages=2, threads=256, dtype: T.dtype = T.float16, accum_dtype: T.dtype = T.float
):
    M, N = T.const("M, N")
    a: T.Tensor((M, N), dtype)
    x: T.Tensor((N,), dtype)
    o = T.empty((M,), dtype)

    with T.Kernel(T.ceildiv(M, block_M), threads=threads) as i0_m:
        o_reducer = T.alloc_reducer(block_M, accum_dtype, replication="all")
        T.clear(o_reducer)
        for i0_n in T.Pipelined(T.ceildiv(N, block_N), num_stages=num_stages):
            a_smem = T.alloc_shared((block_M, block_N), dtype)
            T.copy(a[i0_m * block_M, i0_n * block_N], a_smem)
            a_frag = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(a_smem, a_frag)
            x_frag = T.alloc_fragment(block_N, dtype)
            T.copy(x[i0_n * block_N], x_frag)
            for i1_m, i1_n in T.Parallel(block_M, block_N):
                o_reducer[i1_m] += a_frag[i1_m, i1_n] * x_frag[i1_n]
        T.finalize_reducer(o_reducer)
        T.copy(o_reducer, o[i0_m * block_M])

    return o

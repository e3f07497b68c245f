# upstream: tile-ai/tilelang examples/deepseek_v4/act_quant.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: fp8_quant_kernel; params: M=64, N=256; defaults kept: block_size=128, round_scale=True
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, helper-fn, eager-jit, T.dynamic, T.clamp, float8, T.if_then_else, T.reinterpret, T.Cast, reduce_absmax, disable_tma, T.Tensor[...], T.Pipelined, if-on-param
# blocked-by: factory-param-without-default
# expect: error R102 at 43
# bound-blocked-by: none
# bound: ok
import tilelang
import tilelang.language as T


def fast_log2_ceil(x):
    """Compute ceil(log2(x)) via IEEE 754 bit manipulation. Avoids slow log/ceil intrinsics."""
    bits_x = T.reinterpret(x, "uint32")
    exp_x = (bits_x >> 23) & 0xFF
    man_bits = bits_x & ((1 << 23) - 1)
    return T.Cast("int32", exp_x - 127 + T.if_then_else(man_bits != 0, 1, 0))


def fast_pow2(x):
    """Compute 2^x for integer x via IEEE 754 bit manipulation."""
    bits_x = (x + 127) << 23
    return T.reinterpret(bits_x, "float32")


def fast_round_scale(amax, fp8_max_inv):
    return fast_pow2(fast_log2_ceil(amax * fp8_max_inv))


@tilelang.jit(
    pass_configs={
        tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
    }
)
def fp8_quant_kernel(
    x,
    block_size=128,
    round_scale=True,  # round scale to exponential of 2
):
    """Block-wise FP8 quantization."""

    M = T.dynamic("M")
    N = T.const("N")
    fp8_min, fp8_max = -448.0, 448.0
    in_dtype = T.bfloat16
    out_dtype = T.float8_e4m3
    scale_dtype = T.float32
    compute_dtype = T.float32  # Internal computation in FP32;

    x: T.Tensor[(M, N), in_dtype]

    blk_m = 32
    group_size = block_size

    quant = T.empty((M, N), out_dtype)
    scale = T.empty((M, T.ceildiv(N, group_size)), scale_dtype)

    fp8_max_inv = 1 / fp8_max
    num_stages = 0 if round_scale else 2

    with T.Kernel(T.ceildiv(M, blk_m), T.ceildiv(N, group_size), threads=128) as (
        bx,
        by,
    ):
        x_shared = T.alloc_shared((blk_m, group_size), in_dtype)
        x_local = T.alloc_fragment((blk_m, group_size), in_dtype)
        amax_local = T.alloc_fragment((blk_m,), compute_dtype)
        s_local = T.alloc_fragment((blk_m,), compute_dtype)
        y_local = T.alloc_fragment((blk_m, group_size), out_dtype)
        y_shared = T.alloc_shared((blk_m, group_size), out_dtype)

        for _ in T.Pipelined(1, num_stages=num_stages):
            T.copy(x[bx * blk_m, by * group_size], x_shared, disable_tma=True)
            T.copy(x_shared, x_local)

            T.reduce_absmax(x_local, amax_local, dim=1)
            for i in T.Parallel(blk_m):
                amax_local[i] = T.max(amax_local[i], 1e-4)
                if round_scale:
                    s_local[i] = fast_round_scale(amax_local[i], fp8_max_inv)
                else:
                    s_local[i] = amax_local[i] * fp8_max_inv
            for i, j in T.Parallel(blk_m, group_size):
                y_local[i, j] = T.clamp(x_local[i, j] / s_local[i], fp8_min, fp8_max)

            for i in T.Parallel(blk_m):
                scale[bx * blk_m + i, by] = s_local[i]
            T.copy(y_local, y_shared)
            T.copy(y_shared, quant[bx * blk_m, by * group_size], disable_tma=True)

    return quant, scale

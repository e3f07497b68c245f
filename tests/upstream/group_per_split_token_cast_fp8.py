# upstream: tile-ai/tilelang examples/cast/example_group_per_split_token_cast_to_fp8.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: group_per_split_token_cast_to_fp8; params: M=128, N=256, BG=2, M_max=64, blk_m=8
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, eager-jit, alloc_var, T.clamp, float8, T.if_then_else, reduce_absmax, copy-slice
# blocked-by: factory-param-without-default
# expect: error R102 at 18
# bound-blocked-by: none
# bound: ok
import tilelang
import tilelang.language as T


accum_dtype = T.float32
dtype = T.bfloat16


@tilelang.jit
def group_per_split_token_cast_to_fp8(X, batch_sizes, M_max, blk_m):
    M, N, BG = T.const("M, N, BG")
    group_size = 128
    fp8_min = -448.0
    fp8_max = 448.0

    X: T.Tensor((M, N), dtype)
    batch_sizes: T.Tensor((BG,), T.int32)
    X_fp8 = T.empty((BG, M_max, N), T.float8_e4m3fn)
    X_amax = T.empty((BG, M_max, T.ceildiv(N, group_size)), accum_dtype)

    with T.Kernel(T.ceildiv(M_max, blk_m), T.ceildiv(N, group_size), BG, threads=128) as (bx, by, bz):
        row = bx
        row_g_id = by
        bg = bz
        y_local = T.alloc_fragment((blk_m, group_size), accum_dtype)
        y_amax_local = T.alloc_fragment((blk_m,), accum_dtype)
        y_s_local = T.alloc_fragment((blk_m,), accum_dtype)
        y_q_local = T.alloc_fragment((blk_m, group_size), accum_dtype)
        y_q_local_fp8 = T.alloc_fragment((blk_m, group_size), T.float8_e4m3fn)
        row_offset = T.alloc_var(dtype=T.int32)

        row_offset = 0
        for i in T.serial(bg):
            row_offset += batch_sizes[i]

        T.copy(
            X[row_offset + row * blk_m : row_offset + (row + 1) * blk_m, row_g_id * group_size : (row_g_id + 1) * group_size],
            y_local,
        )
        T.reduce_absmax(y_local, y_amax_local, dim=1)
        for i in T.Parallel(blk_m):
            y_amax_local[i] = T.max(y_amax_local[i], 1e-4)
            y_s_local[i] = T.if_then_else(row * blk_m + i < batch_sizes[bg], y_amax_local[i] / fp8_max, 0)
        for i, j in T.Parallel(blk_m, group_size):
            y_q_local[i, j] = T.clamp(y_local[i, j] / y_s_local[i], fp8_min, fp8_max)
        T.copy(y_q_local, y_q_local_fp8)
        for i, j in T.Parallel(blk_m, group_size):
            y_q_local_fp8[i, j] = T.if_then_else(row * blk_m + i < batch_sizes[bg], y_q_local[i, j], 0)
        for i in T.Parallel(blk_m):
            X_amax[bg, row * blk_m + i, row_g_id] = y_s_local[i]
        T.copy(y_q_local_fp8, X_fp8[bg, row * blk_m : (row + 1) * blk_m, row_g_id * group_size : (row_g_id + 1) * group_size])

    return X_fp8, X_amax

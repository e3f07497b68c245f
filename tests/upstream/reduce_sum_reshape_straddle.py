# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: tile_m=2, hidden=192, group=6, group_k=32, threads=128
# changed: the enclosing test's constants (tile_m = 2; hidden = 192; group = 6; group_k = 32;
#   threads = 128) moved to module level; the kernel moved out of its test function (dedented); the
#   test's torch harness dropped
# constructs: T.reshape, reduce_sum
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing

tile_m = 2
hidden = 192
group = 6
group_k = 32
threads = 128


@T.prim_func
def kernel(
    A: T.Tensor((tile_m, hidden), T.float32),
    B: T.Tensor((tile_m, group), T.float32),
):
    with T.Kernel(1, threads=threads):
        src = T.alloc_fragment((tile_m, hidden), T.float32)
        dst = T.alloc_fragment((tile_m, group), T.float32)

        for i, j in T.Parallel(tile_m, hidden):
            src[i, j] = A[i, j]

        src_reshaped = T.reshape(src, (tile_m, group, group_k))
        T.reduce_sum(src_reshaped, dst, dim=2)

        for i, g in T.Parallel(tile_m, group):
            B[i, g] = dst[i, g]

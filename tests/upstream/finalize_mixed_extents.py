# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: extent=8, threads=128
# changed: the enclosing test's constants (extent = 8; threads = 128) moved to module level; the
#   kernel moved out of its test function (dedented); the test's torch harness dropped
# tilelang-config: tl.disable_warp_specialized=true, tl.disable_tma_lower=true (the test's _COMPILE_FLAGS)
# constructs: get_thread_binding, reducer-v1
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing

extent = 8
threads = 128


@T.prim_func
def kernel(
    A: T.Tensor((extent,), T.float32),
    B: T.Tensor((2 * extent,), T.float32),
    C: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=threads):
        a_frag = T.alloc_fragment((extent,), T.float32)
        b_frag = T.alloc_fragment((2 * extent,), T.float32)
        T.copy(A, a_frag)
        T.copy(B, b_frag)
        total = T.alloc_reducer((1,), T.float32, replication="all")
        T.clear(total)
        for i in T.Parallel(extent):
            total[0] += a_frag[i]
        for j in T.Parallel(2 * extent):
            total[0] += b_frag[j]
        T.finalize_reducer(total)
        if T.get_thread_binding() == 0:
            C[0] = total[0]

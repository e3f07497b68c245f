# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: BLOCK=64, K=8, threads=128
# changed: the enclosing test's constants (BLOCK, K, threads = 64, 8, 128) moved to module level;
#   the kernel moved out of its test function (dedented); the test's torch harness dropped
# tilelang-config: tl.disable_warp_specialized=true, tl.disable_tma_lower=true (the test's _COMPILE_FLAGS)
# constructs: reducer-v1
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing

BLOCK, K, threads = 64, 8, 128


@T.prim_func
def kernel(
    G: T.Tensor((BLOCK, K), T.float32),
    Y: T.Tensor((BLOCK, K), T.float32),
    O: T.Tensor((BLOCK, K), T.float32),
):
    with T.Kernel(1, threads=threads):
        g_frag = T.alloc_fragment((BLOCK, K), T.float32)
        y_frag = T.alloc_fragment((BLOCK, K), T.float32)
        out_frag = T.alloc_fragment((BLOCK, K), T.float32)
        reducer = T.alloc_reducer((BLOCK,), T.float32)
        T.copy(G, g_frag)
        T.copy(Y, y_frag)
        T.clear(reducer)
        for i, j in T.Parallel(BLOCK, K):
            reducer[i] += g_frag[i, j] * y_frag[i, j]
        T.finalize_reducer(reducer)
        for i, j in T.Parallel(BLOCK, K):
            out_frag[i, j] = g_frag[i, j] - reducer[i]
        T.copy(out_frag, O)

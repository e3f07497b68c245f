# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reducer_v2.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: extent=8, threads=128
# changed: the enclosing test's constants (extent, threads = 8, 128) moved to module level; the
#   kernel moved out of its test function (dedented); the test's torch harness dropped
# constructs: get_thread_binding, reducer-v2, conditional-finalize
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing

extent, threads = 8, 128


@T.prim_func
def kernel(
    A: T.Tensor((extent,), T.float32),
    S: T.Tensor((2,), T.int32),
    B: T.Tensor((2,), T.float32),
):
    with T.Kernel(2, threads=threads) as bx:
        src = T.alloc_fragment((extent,), T.float32)
        T.copy(A, src)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        if S[bx] < 0:
            if T.get_thread_binding() == 0:
                B[bx] = 0.0
        else:
            for i in T.Parallel(extent):
                T.reducer_update(acc[0], src[i])
            result = T.alloc_fragment((1,), T.float32)
            T.finalize_reducer(acc, result)
            if T.get_thread_binding() == 0:
                B[bx] = result[0]

# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: num_tokens=64, hidden=2560, num_threads=128, num_vectorize=4
# changed: the enclosing test's constants (num_tokens = 64; hidden = 2560; num_threads = 128;
#   num_vectorize = 4) moved to module level; the kernel and its layout helper `x_layout_fn`
#   moved out of their test function (dedented); the test's torch harness dropped
# constructs: T.reshape, annotate_layout, T.Fragment-layout, reduce_absmax, disable_tma
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing

num_tokens = 64
hidden = 2560
num_threads = 128
num_vectorize = 4


def x_layout_fn(i, j):
    idx = i * hidden + j
    return (
        idx // num_vectorize % num_threads,
        idx // (num_vectorize * num_threads) * num_vectorize + idx % num_vectorize,
    )


@T.prim_func
def kernel(A: T.Tensor((num_tokens, hidden), T.bfloat16), B: T.Tensor((num_tokens,), T.float32)):
    with T.Kernel(num_tokens, threads=num_threads) as (pid,):
        src = T.alloc_fragment((1, hidden), T.bfloat16)
        dst = T.alloc_fragment((1, 1), T.bfloat16)
        T.annotate_layout({src: T.Fragment((1, hidden), forward_fn=x_layout_fn)})
        T.copy(A[pid, 0], src, disable_tma=True)
        src_reshaped = T.reshape(src, (1, 1, hidden))
        T.reduce_absmax(src_reshaped, dst, dim=2)
        B[pid] = T.cast(dst[0, 0], T.float32)

# expect: error R102 at 12:5
# expect: error R102 at 23:22
#
# Python-level code that only running the file could evaluate: a helper with a loop (used
# for the grid) and a comparison with another library's value. Each is R102 naming it.
import torch
import tilelang.language as T


def _blocks(m):
    n = 0
    for i in range(m):  # <- R102
        n += 1
    return n


def kernel(op, M=16, N=8):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128):
            a = T.alloc_fragment((M, N), "float32")
            b = T.alloc_fragment((M,), "float32")
            if op == torch.float16:  # <- R102
                T.clear(b)
            T.copy(A, a)
            T.reduce_sum(a, b, dim=1)
            T.copy(b, B)

    @T.prim_func
    def blocks(A: T.Tensor((M, N), "float32")):
        with T.Kernel(_blocks(M), threads=128):
            T.clear(A)

    return main


_k = kernel("sum")

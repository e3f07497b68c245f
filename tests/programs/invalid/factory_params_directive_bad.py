# expect: error R102 at 3:11
# expect: error R102 at 4:1
# params: Q=4, M=64  # <- R102
# params: N=M +  # <- R102
#
# A `# params:` line that names no factory parameter (Q), and one that does not read
# as `NAME=VALUE, ...`: each is R102 at the directive, never ignored.
import tilelang
import tilelang.language as T


def row_sum(M, N=8):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_fragment((M, N), "float32")
            b = T.alloc_fragment((M,), "float32")
            T.copy(A, a)
            T.reduce_sum(a, b, dim=1)
            T.copy(b, B)

    return main

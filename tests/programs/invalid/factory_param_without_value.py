# expect: error R102 at 13:13
#
# A factory's parameter with no default, no `--param`, no `# params:` line and no call
# with constant arguments has no value: R102 at the first such parameter, naming every
# one and the ways to bind them.
import tilelang
import tilelang.language as T

N = 64


@tilelang.jit
def row_sum(N, M, block_M=16):  # <- R102
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            a = T.alloc_fragment((block_M, N), "float32")
            b = T.alloc_fragment((block_M,), "float32")
            T.copy(A[bx * block_M, 0], a)
            T.reduce_sum(a, b, dim=1)
            T.copy(b, B[bx * block_M])

    return main

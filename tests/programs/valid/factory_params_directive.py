# expect: ok
# params: M=64, N=32
# for-all: M in 16..4096
# assume: M % 16 == 0
#
# A `@tilelang.jit` factory whose size parameters have no defaults, as TileLang's own
# examples write them: the `# params:` line binds them (as `--param M=64 --param N=32`
# would), and the family proves the kernel for every M the for-all gives (a factory
# parameter is a size as a module constant is).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def row_sum(M, N, block_M=16, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            a = T.alloc_fragment((block_M, N), dtype)
            b = T.alloc_fragment((block_M,), dtype)
            T.copy(A[bx * block_M, 0], a)
            T.reduce_sum(a, b, dim=1)
            T.copy(b, B[bx * block_M])

    return main

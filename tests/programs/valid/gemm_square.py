# expect: ok
#
# T.gemm of float16 tiles into a float32 accumulator, the layout TileLang's mma path
# gives C under GemmWarpPolicy.Square (2×2 warps for 64×64 on 4 warps): every product
# exact, each output one sum of 32 products rounded once (docs/semantics.md §9.1).
import tilelang.language as T


@T.prim_func
def main(a: T.Tensor((64, 32), T.float16), b: T.Tensor((32, 64), T.float16),
         c: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        a_s = T.alloc_shared((64, 32), T.float16)
        b_s = T.alloc_shared((32, 64), T.float16)
        acc = T.alloc_fragment((64, 64), T.float32)
        T.copy(a, a_s)
        T.copy(b, b_s)
        T.clear(acc)
        T.gemm(a_s, b_s, acc)
        T.copy(acc, c)

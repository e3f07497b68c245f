# expect: ok
#
# int8 × int8 into int32 is exact (32 products of at most 128·128 fit): the simulated
# per-lane sums and the interpreter's agree to the bit. One warp, two 16×8 tiles.
import tilelang.language as T


@T.prim_func
def main(a: T.Tensor((16, 32), T.int8), b: T.Tensor((32, 16), T.int8),
         c: T.Tensor((16, 16), T.int32)):
    with T.Kernel(1, threads=32) as bx:
        a_s = T.alloc_shared((16, 32), T.int8)
        b_s = T.alloc_shared((32, 16), T.int8)
        acc = T.alloc_fragment((16, 16), T.int32)
        T.copy(a, a_s)
        T.copy(b, b_s)
        T.gemm(a_s, b_s, acc, clear_accum=True)
        T.copy(acc, c)

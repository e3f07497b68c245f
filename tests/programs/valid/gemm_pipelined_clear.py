# expect: ok
#
# A K loop of tiles, pipelined, with TileLang's `clear_accum=(k == 0)` idiom and A
# stored transposed (K×M); GemmWarpPolicy.FullCol splits C's columns among the warps.
import tilelang.language as T


@T.prim_func
def main(a_t: T.Tensor((64, 32), T.float16), b: T.Tensor((64, 64), T.float16),
         c: T.Tensor((32, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        a_s = T.alloc_shared((16, 32), T.float16)
        b_s = T.alloc_shared((16, 64), T.float16)
        acc = T.alloc_fragment((32, 64), T.float32)
        for ko in T.Pipelined(4, num_stages=2):
            T.copy(a_t[ko * 16, 0], a_s)
            T.copy(b[ko * 16, 0], b_s)
            T.gemm(a_s, b_s, acc, transpose_A=True, policy=T.GemmWarpPolicy.FullCol,
                   clear_accum=(ko == 0))
        T.copy(acc, c)

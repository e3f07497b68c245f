# expect: error R101 at 11:9
import tilelang.language as T


@T.prim_func
def main(a: T.Tensor((16, 16), T.float16), b: T.Tensor((16, 16), T.float16)):
    with T.Kernel(1, threads=128) as bx:
        a_s = T.alloc_shared((16, 16), T.float16)
        b_s = T.alloc_shared((16, 16), T.float16)
        c = T.alloc_fragment((16, 16), T.float32)
        T.wgmma_gemm(a_s, b_s, c)

# expect: error R102 at 10:9
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((4, 8), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((4, 8), T.float32)
        out = T.alloc_fragment((8,), T.float32)
        T.reduce_sum(x_frag, out, dim=1)

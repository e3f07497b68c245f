# expect: error R102 at 9:13
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((4, 8), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((4, 8), T.float32)
        for i in T.Parallel(4, 8):
            x_frag[i, 0] = x[i, 0]

# expect: error R102 at 9:29
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(4, threads=128) as bx:
        x_frag = T.alloc_fragment((8,), T.float32)
        for j in T.Parallel(bx + 1):
            x_frag[j] = x[j]

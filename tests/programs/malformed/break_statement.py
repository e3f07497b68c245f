# expect: error R100 at 11:13
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((8,), T.float32)
        for k in T.serial(8):
            x_frag[k] = x[k]
            break

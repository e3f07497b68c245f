# expect: error R300 at 17:13
#
# The copy in warp group 0 places x_frag on threads 0..127; the T.reduce_sum in warp
# group 1 runs on threads 128..255, which hold none of it. No picture: the conflict is
# between two thread ranges as wholes, not one element a thread fails to hold.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((4, 32), T.float32), out: T.Tensor((4,), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        x_frag = T.alloc_fragment((4, 32), T.float32)
        s_frag = T.alloc_fragment((4,), T.float32)
        with T.ws(0):
            T.copy(x, x_frag)
        with T.ws(1):
            T.reduce_sum(x_frag, s_frag, dim=1)

# expect: ok
# input: x=arange(0, 64)
# expect: result out=[28.0, 92.0, 156.0, 220.0, 284.0, 348.0, 412.0, 476.0]
#
# Legacy `acc[i] = acc[i] + v`: the spelled-out store form of a sum update, canonicalized
# like `+=`.
import tilelang.language as T

R = 8
C = 8


@T.prim_func
def main(x: T.Tensor((R, C), T.float32), out: T.Tensor((R,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((R, C), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((R,), T.float32, op="sum", replication="all")
        T.clear(acc)
        for i, j in T.Parallel(R, C):
            acc[i] = acc[i] + x_frag[i, j]
        T.finalize_reducer(acc)
        T.copy(acc, out)

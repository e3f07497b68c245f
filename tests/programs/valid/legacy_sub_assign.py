# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# input: y=[10, 20, 30, 40, 50, 60, 70, 80]
# expect: result out=[324.0]
#
# Legacy `acc[0] -= v` is frontend sugar for a sum update of -v, and `+=` beside it in
# the same loop: sum(y) - sum(x) = 360 - 36.
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    y: T.Tensor((N,), T.float32),
    out: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        y_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        T.copy(y, y_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.fill(acc, 0.0)
        for j in T.Parallel(N):
            acc[0] += y_frag[j]
            acc[0] -= x_frag[j]
        T.finalize_reducer(acc)
        T.copy(acc, out)

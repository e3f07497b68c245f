# expect: error R102 at 17
#
# batch= of T.reduce_* counts the outputs that share one all-reduce; TileLang refuses a
# batch below 1 ("batch must be >= 1").
import tilelang.language as T

R = 4
C = 8


@T.prim_func
def main(x: T.Tensor((R, C), T.float32), s: T.Tensor((R,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        f = T.alloc_fragment((R, C), T.float32)
        T.copy(x, f)
        rs = T.alloc_fragment((R,), T.float32)
        T.reduce_sum(f, rs, dim=1, batch=0)  # <- R102
        T.copy(rs, s)

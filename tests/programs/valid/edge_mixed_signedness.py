# expect: ok
# input: u=[5, 0, 4294967295, 7]
# input: s=[-1, 0, -1, 3]
# input: b=[-1, 5, -128, 1]
# input: c=[200, 4, 127, 2]
# expect: result u_gt_s=[0, 0, 0, 1]
# expect: result b_lt_c=[0, 0, 0, 1]
# expect: result u_plus_s=[4, 0, 4294967294, 10]
#
# Mixed signedness: a uint32 meets an int32 as uint32 (-1 is 4294967295, so 5 > -1 is
# false) and an int8 meets a uint8 as uint8 (-1 is 255), the types TVM gives them and
# the generated CUDA computes in (docs/semantics.md §8).
import tilelang.language as T

N = 4


@T.prim_func
def main(
    u: T.Tensor((N,), T.uint32),
    s: T.Tensor((N,), T.int32),
    b: T.Tensor((N,), T.int8),
    c: T.Tensor((N,), T.uint8),
    u_gt_s: T.Tensor((N,), T.int32),
    b_lt_c: T.Tensor((N,), T.int32),
    u_plus_s: T.Tensor((N,), T.uint32),
):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            u_gt_s[j] = T.if_then_else(u[j] > s[j], 1, 0)
            b_lt_c[j] = T.if_then_else(b[j] < c[j], 1, 0)
            u_plus_s[j] = u[j] + s[j]

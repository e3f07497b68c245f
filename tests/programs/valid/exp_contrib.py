# expect: ok
# input: x=[0, 1, 2, 3, -1, -2, 4, 0]
# input: z=[0, 0, 0, 0, 0, 0, 0, 0]
# expect: result pow2_sum=[32.75]
# expect: result exp_sum=[8.0]
#
# Math intrinsics inside a contribution: T.exp2 of integers is an exact power of two, and
# T.exp of zeros is exactly 1, so both sums are exact: 1+2+4+8+0.5+0.25+16+1 and 8 * 1.
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    z: T.Tensor((N,), T.float32),
    pow2_sum: T.Tensor((1,), T.float32),
    exp_sum: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        z_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        T.copy(z, z_frag)
        p = T.alloc_reducer((1,), T.float32, op="sum")
        e = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(p)
        T.reducer_init(e)
        for j in T.Parallel(N):
            T.reducer_update(p[0], T.exp2(x_frag[j]))
            T.reducer_update(e[0], T.exp(z_frag[j]))
        p_frag = T.alloc_fragment((1,), T.float32)
        e_frag = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(p, p_frag)
        T.finalize_reducer(e, e_frag)
        T.copy(p_frag, pow2_sum)
        T.copy(e_frag, exp_sum)

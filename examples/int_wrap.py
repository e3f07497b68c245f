# expect: ok
# input: x=[2000000000, 2000000000, 1500000000, -7, 123456789, 1000000000, 999999999, 42]
# input: p=[3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59]
# input: u=[4000000000, 300000000, 5, 7]
# expect: result total=[-966477769]
# expect: result prod=[1170538671]
# expect: result utotal=[5032716]
#
# Integer reducers wrap in two's complement, as the GPU does, and are compared exactly:
# an int32 sum that overflows several times, an int32 product of 16 primes (wraps), and
# a uint32 sum that passes 2^32. Wrapping arithmetic is associative, so any combination
# order gives the same bits.
import tilelang.language as T

NX = 8
NP = 16
NU = 4
THREADS = 128


@T.prim_func
def main(
    x: T.Tensor((NX,), T.int32),
    p: T.Tensor((NP,), T.int32),
    u: T.Tensor((NU,), T.uint32),
    total: T.Tensor((1,), T.int32),
    prod: T.Tensor((1,), T.int32),
    utotal: T.Tensor((1,), T.uint32),
):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((NX,), T.int32)
        p_frag = T.alloc_fragment((NP,), T.int32)
        u_frag = T.alloc_fragment((NU,), T.uint32)
        T.copy(x, x_frag)
        T.copy(p, p_frag)
        T.copy(u, u_frag)

        r_sum = T.alloc_reducer((1,), T.int32, op="sum")
        r_prod = T.alloc_reducer((1,), T.int32, op="product")
        r_usum = T.alloc_reducer((1,), T.uint32, op="sum")
        T.reducer_init(r_sum)
        T.reducer_init(r_prod)
        T.reducer_init(r_usum)
        for j in T.Parallel(NX):
            T.reducer_update(r_sum[0], x_frag[j])
        for j in T.Parallel(NP):
            T.reducer_update(r_prod[0], p_frag[j])
        for j in T.Parallel(NU):
            T.reducer_update(r_usum[0], u_frag[j])

        f_sum = T.alloc_fragment((1,), T.int32)
        f_prod = T.alloc_fragment((1,), T.int32)
        f_usum = T.alloc_fragment((1,), T.uint32)
        T.finalize_reducer(r_sum, f_sum)
        T.finalize_reducer(r_prod, f_prod)
        T.finalize_reducer(r_usum, f_usum)
        T.copy(f_sum, total)
        T.copy(f_prod, prod)
        T.copy(f_usum, utotal)

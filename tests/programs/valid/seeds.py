# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# input: n=[3, 1, 4, 1, 5, 9, 2, 6]
# expect: result s=[35.75]
# expect: result hi=[100]
# expect: result lo=[-5]
# expect: result bits=[4111]
#
# Seeds of several ops and dtypes, each combined exactly once: a negative float seed of
# a sum, an int seed of a max that exceeds every contribution, an int seed of a min that
# is below every contribution, and an int seed of a bitxor: 4096 ^ (3 ^ 1 ^ 4 ^ 1 ^ 5 ^
# 9 ^ 2 ^ 6) = 4096 ^ 15 = 4111 (a seed applied once per thread would cancel itself).
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    n: T.Tensor((N,), T.int32),
    s: T.Tensor((1,), T.float32),
    hi: T.Tensor((1,), T.int32),
    lo: T.Tensor((1,), T.int32),
    bits: T.Tensor((1,), T.int32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        n_frag = T.alloc_fragment((N,), T.int32)
        T.copy(x, x_frag)
        T.copy(n, n_frag)
        r_s = T.alloc_reducer((1,), T.float32, op="sum")
        r_hi = T.alloc_reducer((1,), T.int32, op="max")
        r_lo = T.alloc_reducer((1,), T.int32, op="min")
        r_bits = T.alloc_reducer((1,), T.int32, op="bitxor")
        T.reducer_init(r_s, -0.25)
        T.reducer_init(r_hi, 100)
        T.reducer_init(r_lo, -5)
        T.reducer_init(r_bits, 4096)
        for j in T.Parallel(N):
            T.reducer_update(r_s[0], x_frag[j])
            T.reducer_update(r_hi[0], n_frag[j])
            T.reducer_update(r_lo[0], n_frag[j])
            T.reducer_update(r_bits[0], n_frag[j])
        f_s = T.alloc_fragment((1,), T.float32)
        f_hi = T.alloc_fragment((1,), T.int32)
        f_lo = T.alloc_fragment((1,), T.int32)
        f_bits = T.alloc_fragment((1,), T.int32)
        T.finalize_reducer(r_s, f_s)
        T.finalize_reducer(r_hi, f_hi)
        T.finalize_reducer(r_lo, f_lo)
        T.finalize_reducer(r_bits, f_bits)
        T.copy(f_s, s)
        T.copy(f_hi, hi)
        T.copy(f_lo, lo)
        T.copy(f_bits, bits)

# expect: ok
# input: x=[1.75, -2.5, 3.25, 4.0, -0.5, 6.9, 7.1, 8.0]
# input: n=[1, 2, 3, 4, 5, 6, 7, 8]
# input: b=[-128, 127, 1, -1, 100, 28, -50, 3]
# expect: result truncated=[27]
# expect: result as_float=[36.0]
# expect: result widened=[80]
# expect: result halves=[28.0]
#
# Contribution dtypes: a float value into an int32 reducer needs an explicit T.cast
# (which truncates toward zero, as C does); int32 into a float32 reducer via T.cast;
# int8 into int32 and float16 into float32 widen without loss and need no cast (x rounded
# to float16: 6.9 -> 6.8984375, 7.1 -> 7.1015625, so the halves sum is exactly 28).
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    n: T.Tensor((N,), T.int32),
    b: T.Tensor((N,), T.int8),
    truncated: T.Tensor((1,), T.int32),
    as_float: T.Tensor((1,), T.float32),
    widened: T.Tensor((1,), T.int32),
    halves: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=64) as bx:
        r_trunc = T.alloc_reducer((1,), T.int32, op="sum")
        r_float = T.alloc_reducer((1,), T.float32, op="sum")
        r_wide = T.alloc_reducer((1,), T.int32, op="sum")
        r_half = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(r_trunc)
        T.reducer_init(r_float)
        T.reducer_init(r_wide)
        T.reducer_init(r_half)
        for j in T.Parallel(N):
            T.reducer_update(r_trunc[0], T.cast(x[j], T.int32))
            T.reducer_update(r_float[0], T.cast(n[j], T.float32))
            T.reducer_update(r_wide[0], b[j])
            T.reducer_update(r_half[0], T.cast(x[j], T.float16))
        f_trunc = T.alloc_fragment((1,), T.int32)
        f_float = T.alloc_fragment((1,), T.float32)
        f_wide = T.alloc_fragment((1,), T.int32)
        f_half = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(r_trunc, f_trunc)
        T.finalize_reducer(r_float, f_float)
        T.finalize_reducer(r_wide, f_wide)
        T.finalize_reducer(r_half, f_half)
        T.copy(f_trunc, truncated)
        T.copy(f_float, as_float)
        T.copy(f_wide, widened)
        T.copy(f_half, halves)

# expect: ok
#
# A float8 value reaching a reducer's index: `T.cast(a[j], T.int32)` truncates a
# float8_e4m3fn value, which is never infinite and never past ±448 (every conversion
# into float8 saturates, docs/semantics.md §8), so the index lies in 0..896 whatever
# the inputs: the static index check (R209, Z3 over the index) proves it from the
# dtype's range. One slot less is refused (tests/programs/invalid/float8_index_out_of_shape.py).
import tilelang.language as T

N = 64


@T.prim_func
def main(a: T.Tensor((N,), T.float8_e4m3fn), hist: T.Tensor((897,), T.int32)):
    with T.Kernel(1, threads=64) as bx:
        h = T.alloc_reducer((897,), T.int32, op="sum")
        T.reducer_init(h)
        for j in T.Parallel(N):
            T.reducer_update(h[T.cast(a[j], T.int32) + 448], 1)
        q = T.alloc_fragment((897,), T.int32)
        T.finalize_reducer(h, q)
        T.copy(q, hist)

# expect: error R601 at 16
#
# A saturating int8 addition declared as a reducer op is refused before anything runs:
# clamping after every step is not associative, so the result would depend on how the
# threads grouped the contributions. check proves the identity and commutativity, and
# shows the associativity counterexample: (127 ⊕ 1) ⊕ -1 = 126 but 127 ⊕ (1 ⊕ -1) = 127.
# The fix is to accumulate in a wider dtype (a sum reducer of int32) and clamp once,
# after the finalize.
import tilelang.language as T

N = 64
THREADS = 128


@T.reducer_op(dtype=T.int8, identity=0)
def saturating_add(a, b):  # <- R601
    """a + b clamped to [-128, 127]: computed in int16, then narrowed."""
    return T.cast(T.max(T.min(T.cast(a, T.int16) + T.cast(b, T.int16), 127), -128), T.int8)


@T.prim_func
def main(x: T.Tensor((N,), T.int8), total: T.Tensor((1,), T.int8)):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((N,), T.int8)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.int8, op="saturating_add")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])
        out = T.alloc_fragment((1,), T.int8)
        T.finalize_reducer(acc, out)
        T.copy(out, total)

# expect: error R102 at 21:34
# Found by the mangled-program campaign (verify/fuzzing/mangle.py): a fragment read at index 2**63: OverflowError in spec/indexexpr.py:_eval.
# The tool crashed on it (exit 4) until sizes, constants and depths got their limits.
import tilelang.language as T

N = 8


@T.prim_func
def main(y: T.Tensor((N,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        y_frag = T.alloc_fragment((N,), T.float32)
        T.fill(y_frag, 1.0)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], y_frag[j])
        s = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, s)
        for j in T.Parallel(N):
            y[j] = y_frag[j] + s[2**63]

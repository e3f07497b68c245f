# expect: error R209 at 19
#
# T.clamp in a reducer index is read by the verifier (Z3) as the max/min it is: clamping
# j to [0, 8] still reaches 8 for j >= 8, one past the reducer's 8 outputs. Clamp to
# [0, 7] (tests/programs/valid/builtin_clamp_reducer.py).
import tilelang.language as T

N = 16


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((8,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[T.clamp(j, 0, 8)], x_frag[j])  # <- R209
        result = T.alloc_fragment((8,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)

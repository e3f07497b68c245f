# expect: ok
# input: x=arange(0, 8)
# expect: result out=[28.0]
#
# A huge constant in the condition of a conditional expression inside a reducer update:
# `j > 2**63` is false for every int32 j, so every x[j] enters the sum.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(8):
            T.reducer_update(acc, 0, 0.0 if j > 2**63 else x[j])
        r = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, r)
        T.copy(r, out)

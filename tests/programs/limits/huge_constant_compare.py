# expect: ok
# input: x=arange(0, 8)
# expect: result out=[28.0]
# expect: result y=[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
#
# Constants are exact Python integers: `j < 2**63` holds for every int32 j (a wrapped
# literal made it false), also as the guard of a reducer update, and `j >= -2**70` too.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), y: T.Tensor((8,), T.float32),
         out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(8):
            if j < 2**63:
                y[j] = 1.0
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(8):
            if j < 2**63 and j >= -2**70 and 2**64 != j:
                T.reducer_update(acc, 0, x[j])
        r = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, r)
        T.copy(r, out)

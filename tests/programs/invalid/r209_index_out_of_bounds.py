# expect: error R209 at 18
#
# The logical index leaves the reducer's shape: j runs to 15 but the reducer has 8
# outputs (provable from the loop bounds).
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
            T.reducer_update(acc[j], x_frag[j])  # <- R209
        result = T.alloc_fragment((8,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)

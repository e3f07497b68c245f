# expect: error R506 at 12
#
# A grid of 1 x 70000 blocks: sm_90 allows at most 65535 in y (and in z; x goes to
# 2^31 - 1). Refused with R506 at the T.Kernel before the interpreter runs any block.
import tilelang.language as T

ROWS = 70000


@T.prim_func
def main(x: T.Tensor((ROWS, 8), T.float32), out: T.Tensor((ROWS,), T.float32)):
    with T.Kernel(1, ROWS, threads=32) as (bx, by):
        x_frag = T.alloc_fragment((8,), T.float32)
        T.copy(x[by, 0], x_frag)
        total = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(8):
            T.reducer_update(total, (0,), x_frag[j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(total, result)
        T.copy(result, out[by])

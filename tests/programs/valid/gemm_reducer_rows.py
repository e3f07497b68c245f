# expect: ok
#
# A deferred reduction over a gemm's result: a sum reducer of each row of C = A·B and a
# max reducer of each column, updated from the T.Parallel loop that follows the
# accumulator's mma layout (each row of a 32×32 C sits on the 4 lanes of a quad in two
# warps), then finalized; the canonical and the fast plans both run on that ownership.
import tilelang.language as T


@T.prim_func
def main(a: T.Tensor((32, 32), T.float16), b: T.Tensor((32, 32), T.float16),
         rows: T.Tensor((32,), T.float32), cols: T.Tensor((32,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        a_s = T.alloc_shared((32, 32), T.float16)
        b_s = T.alloc_shared((32, 32), T.float16)
        acc = T.alloc_fragment((32, 32), T.float32)
        T.copy(a, a_s)
        T.copy(b, b_s)
        T.gemm(a_s, b_s, acc, clear_accum=True)
        row_sum = T.alloc_reducer((32,), T.float32, op="sum")
        col_max = T.alloc_reducer((32,), T.float32, op="max")
        T.reducer_init(row_sum)
        T.reducer_init(col_max)
        for i, j in T.Parallel(32, 32):
            T.reducer_update(row_sum[i], acc[i, j])
            T.reducer_update(col_max[j], acc[i, j])
        row_out = T.alloc_fragment((32,), T.float32)
        col_out = T.alloc_fragment((32,), T.float32)
        T.finalize_reducer(row_sum, row_out)
        T.finalize_reducer(col_max, col_out)
        T.copy(row_out, rows)
        T.copy(col_out, cols)

# expect: ok
# input: x=[[3, -1, 4, -1, 5, -9, 2, 6], [-5, -3, -5, -8, -9, -7, -9, -3], [2, 7, 1, 8, 2, 8, 1, 8], [0, 0, 0, 0, 0, 0, 0, 0]]
# expect: result row_max=[6.0, -3.0, 8.0, 0.0]
#
# A row max over a replicated update loop: T.Parallel(4, 8) is 32 iterations on 128
# threads, 4 replicas, and each row's 8 contributions sit in 8 different threads, so the
# finalize must reduce across threads. TileLang 0.1.15 (PyPI) emits no cross-thread
# reduction at all here (its CUDA finalizes with `mx_frag[0] = mx[0];`) and returns
# x[:, 0] = [3, -5, 2, 0]; with threads=32 (no replicas) it is right. Found by
# `verify-reducer run --backend tilelang` on 2026-11-29 (docs/gpu-runs/).
import tilelang.language as T

ROWS = 4
COLS = 8
THREADS = 128


@T.prim_func
def main(x: T.Tensor((ROWS, COLS), T.float32), row_max: T.Tensor((ROWS,), T.float32)):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((ROWS, COLS), T.float32)
        T.copy(x, x_frag)

        mx = T.alloc_reducer((ROWS,), T.float32, op="max")
        T.reducer_init(mx)
        for i, j in T.Parallel(ROWS, COLS):
            T.reducer_update(mx[i], x_frag[i, j])

        mx_frag = T.alloc_fragment((ROWS,), T.float32)
        T.finalize_reducer(mx, mx_frag)
        T.copy(mx_frag, row_max)

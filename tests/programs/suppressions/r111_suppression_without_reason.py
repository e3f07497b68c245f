# expect: error R111 at 16
#
# A suppression comment must say why the finding is accepted: `ignore[R400]` alone is
# R111 (the reason is mandatory; found by `check`, after the epoch verifier, so not
# under invalid/).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((8,), T.float32)
        T.copy(x, x_frag)
        total = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.reducer_init(total)
        for j in T.Parallel(8):  # verify-reducer: ignore[R400]  # <- R111
            T.reducer_update(total[0], x_frag[j])
        T.finalize_reducer(total)
        T.copy(total, out)

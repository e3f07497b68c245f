# expect: error R102 at 12
#
# memory_order is one of C++'s six names (relaxed, consume, acquire, release, acq_rel,
# seq_cst), as TileLang's _MEMORY_ORDER_ID_MAP has them.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((32,), T.float32), y: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(32):
            T.atomic_add(y[0], x[j], memory_order="sequential")  # <- R102

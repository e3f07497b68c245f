# expect: error R102 at 13
#
# An atomic updates global or shared memory; a fragment's element lives in one thread's
# registers, where `+=` (or a reducer) is the update.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((32,), T.float32), y: T.Tensor((32,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        acc = T.alloc_fragment((32,), T.float32)
        for j in T.Parallel(32):
            T.atomic_add(acc[j], x[j])  # <- R102
        T.copy(acc, y)

# expect: error R220 at 30
# for-all: N in 1..16
#
# The sum of a vector of at most TILE elements, padded into one tile; the update is
# predicated on the vector's length (`j < N`, affine in the loop variable and the size).
# At the file's N = 8 only j < 8 contribute, all on threads 0..7 (and their replicas),
# so the fast plan of width 8 is proved there. The family proof reads the predicate
# with N symbolic and asks the same obligations of that plan for every N: at the
# smallest counterexample N = 9, iteration j = 8 lands in group {8..15}, missing from
# group {0..7}. At N = 9 the tool's own search would pick width 16, but a kernel
# compiled for the family is the plan of the file's sizes: the instance simulates it
# there too and loses the contribution concretely (R503).
import tilelang.language as T

N = 8
TILE = 16
THREADS = 128


@T.prim_func
def main(x: T.Tensor((N,), T.float32), total: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((TILE,), T.float32)
        for j in T.Parallel(TILE):
            x_frag[j] = T.if_then_else(j < N, x[j], T.float32(0))
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(TILE):
            if j < N:
                T.reducer_update(acc[0], x_frag[j])
        acc_frag = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, acc_frag)
        T.copy(acc_frag, total)

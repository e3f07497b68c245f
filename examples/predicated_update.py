# expect: ok
# input: x=[3, -1, 4, -1, 5, -9, 2, 6, -5, 3, 5, -8, 9, 7, -9, 3]
# expect: result pos_sum=[47.0]
# expect: result head_count=[5]
#
# Predicated updates count exactly the logically enabled contributions: a data predicate
# (only positive x) and an index predicate (only the first HEAD elements, and only the
# positive ones among them). T.Parallel(16) on 128 threads has 8 replicas; a predicate
# decides whether an iteration contributes, never how many times.
import tilelang.language as T

BD = 16
HEAD = 8
THREADS = 128


@T.prim_func
def main(
    x: T.Tensor((BD,), T.float32),
    pos_sum: T.Tensor((1,), T.float32),
    head_count: T.Tensor((1,), T.int32),
):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((BD,), T.float32)
        T.copy(x, x_frag)

        pos = T.alloc_reducer((1,), T.float32, op="sum")
        cnt = T.alloc_reducer((1,), T.int32, op="sum")
        T.reducer_init(pos)
        T.reducer_init(cnt)
        for j in T.Parallel(BD):
            if x_frag[j] > 0:
                T.reducer_update(pos[0], x_frag[j])
                if j < HEAD:
                    T.reducer_update(cnt[0], 1)

        pos_frag = T.alloc_fragment((1,), T.float32)
        cnt_frag = T.alloc_fragment((1,), T.int32)
        T.finalize_reducer(pos, pos_frag)
        T.finalize_reducer(cnt, cnt_frag)
        T.copy(pos_frag, pos_sum)
        T.copy(cnt_frag, head_count)

# expect: error R202 at 26
#
# The sum_smaller_probs pattern with the updates moved before the condition: a block
# whose s[bx] is negative has contributed to `acc` and then skips the finalize, so its
# contributions are lost. The condition is block-uniform (not R207); what makes the
# skipped finalize wrong is that the path that skips it carries contributions. TileLang
# accepts this ("a skipped finalize leaves the partials unread"); every contribution
# must land exactly once (docs/semantics.md §5), so here it is R202 at the init, with
# notes along the lossy path.
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    s: T.Tensor((2,), T.int32),
    out: T.Tensor((2,), T.float32),
):
    with T.Kernel(2, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        T.reducer_init(acc)  # <- R202
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])
        if s[bx] >= 0:
            T.finalize_reducer(acc, result)
            out[bx] = result[0]

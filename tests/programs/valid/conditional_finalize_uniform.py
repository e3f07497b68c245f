# expect: ok
# input: x=arange(1, 33)
# input: s=[-1, 2, -3, 4]
# input: out=[7.0, 7.0, 7.0, 7.0]
# input: total=[7.0, 7.0, 7.0, 7.0]
# expect: result out=[0.0, 100.0, 0.0, 228.0]
# expect: result total=[7.0, 1100.0, 7.0, 1228.0]
#
# vLLM's `sum_smaller_probs` pattern (TileLang's own test of it:
# tests/upstream/rv2_conditional_refinement.py): the epoch is opened at block scope, and
# updated and finalized inside one arm of a condition every thread of the block
# evaluates alike (a global tensor read at the block index). A block that takes the
# other arm contributed nothing, so skipping the finalize loses nothing: the finalize's
# destination is simply not written there (`total` keeps its input; a seed, like the
# identity, is not a contribution). docs/semantics.md §4.
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((4, N), T.float32),
    s: T.Tensor((4,), T.int32),
    out: T.Tensor((4,), T.float32),
    total: T.Tensor((4,), T.float32),
):
    with T.Kernel(4, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x[bx, 0:N], x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        seeded = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        T.reducer_init(seeded, 1000.0)
        if s[bx] < 0:
            if T.get_thread_binding() == 0:
                out[bx] = 0.0
        else:
            for j in T.Parallel(N):
                T.reducer_update(acc[0], x_frag[j])
                T.reducer_update(seeded[0], x_frag[j])
            result = T.alloc_fragment((1,), T.float32)
            with_seed = T.alloc_fragment((1,), T.float32)
            T.finalize_reducer(acc, result)
            T.finalize_reducer(seeded, with_seed)
            T.copy(with_seed, total[bx:bx + 1])
            if T.get_thread_binding() == 0:
                out[bx] = result[0]

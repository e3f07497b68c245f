# expect: error R207 at 27
#
# The sum_smaller_probs shape, but the condition is the thread index (through a name):
# half the threads would reach the finalize's all-reduce and half would not. The path
# that skips the finalize contributes nothing, so nothing is lost there; what is wrong
# is that the participants do not evaluate the condition alike. R207 at the finalize,
# and no R202 as well: the refined R202 asks a block-uniform condition of a skipped
# finalize, and R207 is the rule that says this one is not.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        T.fill(result, 0.0)
        T.reducer_init(acc)
        tid = T.get_thread_binding()
        if tid < 64:
            for j in T.Parallel(N):
                T.reducer_update(acc[0], x_frag[j])
            T.finalize_reducer(acc, result)  # <- R207
        T.copy(result, out)

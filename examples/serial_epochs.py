# expect: ok
# for-all: CHUNKS in 1..65536
# input: x=arange(0, 96)
# expect: result out=[[6.0, 22.0, 38.0, 54.0], [70.0, 86.0, 102.0, 118.0], [134.0, 150.0, 166.0, 182.0], [198.0, 214.0, 230.0, 246.0], [262.0, 278.0, 294.0, 310.0], [326.0, 342.0, 358.0, 374.0]]
#
# One reducer, several epochs: a serial loop reopens the epoch with T.reducer_init at the
# top of each iteration and finalizes it into the next slice of the output. Each chunk
# of 16 values is summed in groups of 4 (a (4,) reducer fed by T.Parallel(4, 4) = 16
# iterations on 64 threads, 4 replicas). Nothing leaks from one epoch into the next.
# The for-all line proves it for every number of chunks up to 65536 (a loop that
# runs zero times cannot happen: a tensor has no zero extent; docs/design.md §21).
import tilelang.language as T

CHUNKS = 6
GROUPS = 4
GROUP = 4
THREADS = 64


@T.prim_func
def main(
    x: T.Tensor((CHUNKS, GROUPS * GROUP), T.float32),
    out: T.Tensor((CHUNKS, GROUPS), T.float32),
):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((GROUPS * GROUP,), T.float32)
        acc = T.alloc_reducer((GROUPS,), T.float32, op="sum")
        result = T.alloc_fragment((GROUPS,), T.float32)
        for c in T.serial(CHUNKS):
            T.copy(x[c, 0:GROUPS * GROUP], x_frag)
            T.reducer_init(acc)
            for g, e in T.Parallel(GROUPS, GROUP):
                T.reducer_update(acc[g], x_frag[g * GROUP + e])
            T.finalize_reducer(acc, result)
            T.copy(result, out[c, 0:GROUPS])

# expect: error R214 at 22:13
#
# Issue 24's campaign (#2581 of seed 41): a finalize into a fragment of another shape.
# `check` says R214; `run --no-verify --backend sim` ran it anyway and the simulator indexed
# past the destination (exit 4, IndexError in interp/registers.py). A finalize with nowhere
# to put its partials leaves the program no meaning, so every path refuses it where it is
# loaded (verify.oracle.pipeline.UNEXECUTABLE).
import tilelang.language as T


@T.prim_func
def main(a0: T.Tensor((2, 4), T.float32), o0: T.Tensor((2, 1), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        a0_frag = T.alloc_fragment((2, 4), T.float32)
        acc0 = T.alloc_reducer((1,), T.float32, op="sum")
        res0 = T.alloc_fragment((1,), T.float32)
        T.copy(a0[bx * 2, 0], a0_frag)
        for it in T.serial(2):
            T.reducer_init(acc0)
            for k in T.Parallel(2):
                T.reducer_update(acc0[0], a0_frag[it, k + 2])
            T.finalize_reducer(acc0, a0_frag)  # <- R214
            T.copy(res0, o0[(bx * 2) + it, 0:1])

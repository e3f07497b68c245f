# expect: ok
# input: a0=[[1.0,-1.0,-1.0,1.0,1.0,1.0,-1.0,-1.0,1.0,-1.0,1.0,-1.0,-1.0,-1.0,1.0,1.0],[1.0,1.0,1.0,-1.0,-1.0,-1.0,-1.0,-1.0,1.0,1.0,-1.0,1.0,1.0,-1.0,1.0,1.0],[-1.0,1.0,-1.0,1.0,1.0,-1.0,-1.0,1.0,1.0,-1.0,-1.0,1.0,1.0,1.0,-1.0,1.0]]
# expect: result o0=[[1.0,1.0],[-1.0,1.0],[1.0,-1.0]]
#
# Fixed fuzz finding (issue #12, regression test): this was a false R300 (layout conflict)
# on a valid program with several update loops per epoch, reading a0_frag[it, 8*i + k]
# over k < 3 (then k + 3 over k < 5): 8 is no multiple of 3 or 5, so no loop could place
# a0_frag, and the copy's default partition moves each column's holders with the row `it`.
# Now the first loop places a0_frag through the inverse of its gapped index and the second
# follows it. GPU fuzz campaign of 2026-12-01, seed 2027 case 818; TileLang 0.1.15 runs it
# correctly.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((3, 16), T.float32),
    o0: T.Tensor((3, 2), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        a0_frag = T.alloc_fragment((3, 16), T.float32)
        acc0 = T.alloc_reducer((2,), T.float32, op="product")
        res0 = T.alloc_fragment((2,), T.float32)
        T.copy(a0[bx * 3, 0], a0_frag)
        for it in T.serial(3):
            T.reducer_init(acc0)
            for i, k in T.Parallel(2, 3):
                T.reducer_update(acc0[i], a0_frag[it, (i * 8) + k])
            for i, k in T.Parallel(2, 5):
                T.reducer_update(acc0[i], a0_frag[it, (i * 8) + (k + 3)])
            T.finalize_reducer(acc0, res0)
            T.copy(res0, o0[(bx * 3) + it, 0:2])

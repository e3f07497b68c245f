# expect: ok
# input: a0=[[7,3],[2,0],[6,7]]
# expect: result o0=[[7,3],[2,0],[6,7]]
#
# Regression for issue #12, a fuzz finding that got a false R300: a fragment row read at
# a sum of loop variables (a0_frag[it, i + k], k of extent 1) inside a serial loop. The
# layout search placed rows read by a serial index only when the other dimensions were
# plain loop variables; now the loop places a0_frag through the inverse of any affine
# index (codegen/layout_inverse.py) and the whole-tile copy adopts that layout.
# XOR of one value per output: o0 = a0.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((3, 2), T.uint32),
    o0: T.Tensor((3, 2), T.uint32),
):
    with T.Kernel(1, threads=64) as bx:
        a0_frag = T.alloc_fragment((3, 2), T.uint32)
        acc0 = T.alloc_reducer((2,), T.uint32, op="bitxor")
        res0 = T.alloc_fragment((2,), T.uint32)
        T.copy(a0[bx * 3, 0], a0_frag)
        for it in T.serial(3):
            T.reducer_init(acc0)
            for i, k in T.Parallel(2, 1):
                T.reducer_update(acc0[i], a0_frag[it, i + k])
            T.finalize_reducer(acc0, res0)
            T.copy(res0, o0[(bx * 3) + it, 0:2])

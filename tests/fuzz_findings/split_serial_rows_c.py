# expect: ok
# input: a0=[[1.0,-1.0,-1.0,1.0,1.0,1.0,-1.0,-1.0,1.0,-1.0,1.0,-1.0,-1.0,-1.0,1.0,1.0],[1.0,1.0,1.0,-1.0,-1.0,-1.0,-1.0,-1.0,1.0,1.0,-1.0,1.0,1.0,-1.0,1.0,1.0],[-1.0,1.0,-1.0,1.0,1.0,-1.0,-1.0,1.0,1.0,-1.0,-1.0,1.0,1.0,1.0,-1.0,1.0]]
# expect: result o0=[[1.0,1.0],[-1.0,1.0],[1.0,-1.0]]
#
# Open fuzz finding (issue #12): a false R300 on a valid program with several update loops
# per epoch (layout conflict: T.Parallel(2, 3) at line 19: iteration (i=1, k=0, it=0) runs on thread 3, which does not hold a0_frag[0, 8] (held by threads 8)). GPU fuzz campaign of 2026-12-01, seed 2027 case 818.
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

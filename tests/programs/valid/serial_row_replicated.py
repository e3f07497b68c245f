# expect: ok
# input: a0=[[8],[-6],[6]]
# expect: result o0=[[8],[-6],[6]]
#
# Found by `verify-reducer fuzz` (seed 2; minimized from a three-reducer kernel): a serial
# epoch loop reads the fragment row of its iteration, a0_frag[it, k], inside a
# T.Parallel(1) that every one of the 32 threads runs (replication 32). Each epoch
# XOR-reduces one value, so o0 is a0. `check` rejects it with a false R300 (thread 1
# runs iteration k=0 but does not hold a0_frag[0, 0]): the fragment's layout must give
# every replica thread the row it reads. A correct tool accepts it with this result.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((3, 1), T.int32),
    o0: T.Tensor((3, 1), T.int32),
):
    with T.Kernel(1, threads=32) as bx:
        a0_frag = T.alloc_fragment((3, 1), T.int32)
        acc0 = T.alloc_reducer((1,), T.int32, op="bitxor", replication="all")
        T.copy(a0[bx * 3, 0], a0_frag)
        for it in T.serial(3):
            T.clear(acc0)
            for k in T.Parallel(1):
                acc0[0] ^= a0_frag[it, k]
            T.finalize_reducer(acc0)
            T.copy(acc0, o0[(bx * 3) + it, 0:1])

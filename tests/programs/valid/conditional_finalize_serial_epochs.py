# expect: ok
# input: x=arange(0, 32)
# input: mask=[1, 0, 1, 0]
# input: out=[-1.0, -1.0, -1.0, -1.0]
# expect: result out=[28.0, -1.0, 156.0, -1.0]
#
# One epoch per serial iteration, in the legacy surface: `T.clear` opens it at the top
# of each iteration, and the updates and the in-place finalize sit under a condition
# on a global tensor read at the loop variable (through a name: `keep = mask[k]`),
# which every thread evaluates alike. An iteration whose mask is 0 contributes nothing,
# so the next iteration's `T.clear` reopens an epoch that has nothing to lose, and the
# last one may reach the end of the kernel open. docs/semantics.md §4.
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((4, N), T.float32),
    mask: T.Tensor((4,), T.int32),
    out: T.Tensor((4,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((4, N), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        for k in T.serial(4):
            T.clear(acc)
            keep = mask[k]
            if keep != 0:
                for j in T.Parallel(N):
                    acc[0] += x_frag[k, j]
                T.finalize_reducer(acc)
                out[k] = acc[0]

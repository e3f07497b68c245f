# expect: error R300 at 18:22
#
# x_frag is only filled, then read at an index loaded from another fragment: no op can
# place it, so it keeps the default partition of its shape, and no layout lets the loop
# know which thread holds x_frag[k_frag[j]]. Every root of the search meets the same
# index, so R300 stays.
import tilelang.language as T


@T.prim_func
def main(k: T.Tensor((8,), T.int32), out: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((8,), T.float32)
        k_frag = T.alloc_fragment((8,), T.int32)
        T.fill(x_frag, 1.0)
        T.copy(k, k_frag)
        for j in T.Parallel(8):
            out[j] = x_frag[k_frag[j]]  # <- R300

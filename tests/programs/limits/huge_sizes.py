# expect: error R102 at 14:24
# expect: error R102 at 16:33
# expect: error R102 at 17:33
# expect: error R102 at 18:18
# expect: error R102 at 20:21
#
# Sizes a run cannot hold or finish are refused with the number, never a MemoryError
# or a hang: a tensor, allocations, a serial loop, a T.Parallel domain (docs/limits.md).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32),
         big: T.Tensor((2**40,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        frag = T.alloc_fragment((2**40,), T.float32)
        shared = T.alloc_shared((2**20, 2**20), T.float32)
        for i in T.serial(2**30):
            x[0] = 1.0
        for i, j in T.Parallel(2**13, 2**14):
            x[0] = 1.0

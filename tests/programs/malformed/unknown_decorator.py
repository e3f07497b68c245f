# expect: error R101 at 5:2
import functools
import tilelang.language as T

@functools.lru_cache
@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((8,), T.float32)

# expect: error R102 at 11:9
#
# A legal launch whose grid times the serial loop inside is more than the interpreter
# runs (2**24 body iterations, docs/limits.md).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(2**20, 64, threads=32) as (bx, by):
        for k in T.serial(2):
            x[0] = 1.0

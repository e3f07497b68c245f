# expect: error R102 at 15:13
# expect: error R102 at 17:9
#
# Each loop is within the limits, the nests are not: 2**25 serial iterations of the
# innermost body, 2**27 T.Parallel lanes at once: the perfect nest of T.Parallel loops
# is one T.Parallel over both extents, refused at the nest (docs/limits.md).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.serial(2**12):
            x[1] = 2.0
            for k in T.serial(2**13):
                x[0] = 2.0
        for i in T.Parallel(2**13):
            for j in T.Parallel(2**14):
                x[0] = 1.0

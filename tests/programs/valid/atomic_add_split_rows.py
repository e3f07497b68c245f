# expect: ok
# input: X=arange(0, 256)
# input: Out=[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
# expect: result Out=[896.5, 904.5, 912.5, 920.5, 928.5, 936.5, 944.5, 952.5, 960.5, 968.5, 976.5, 984.5, 992.5, 1000.5, 1008.5, 1016.5, 1024.5, 1032.5, 1040.5, 1048.5, 1056.5, 1064.5, 1072.5, 1080.5, 1088.5, 1096.5, 1104.5, 1112.5, 1120.5, 1128.5, 1136.5, 1144.5]
#
# Split-K in one line: each of the 8 blocks adds its row of X into Out atomically, so
# Out[j] = 0.5 + Σ_b X[b, j] whatever order the blocks run in. The T.Parallel's layout
# replicates each column over the 4 warps of the 128-thread block: only replica 0 issues
# the atomic (codegen/lower/atomics.py), or every column would be added 4 times.
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((8, 32), T.float32), Out: T.Tensor((32,), T.float32)):
    with T.Kernel(8, threads=128) as bx:
        for j in T.Parallel(32):
            T.atomic_add(Out[j], X[bx, j])

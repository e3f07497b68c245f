# expect: ok
#
# A K loop of tiles into a gemm, then one more gemm after the loop on the last tiles:
# the tiles are read outside the loop, so the loop is not staged (staged, the gemm after
# it would read stage 0, not the last tile; found in review, 2026-12-04).
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 128), T.float16), B: T.Tensor((128, 64), T.float16),
         C: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 16), T.float16)
        B_s = T.alloc_shared((16, 64), T.float16)
        acc = T.alloc_fragment((64, 64), T.float32)
        T.clear(acc)
        for k in T.Pipelined(8, num_stages=3):
            T.copy(A[0, k * 16], A_s)
            T.copy(B[k * 16, 0], B_s)
            T.gemm(A_s, B_s, acc)
        T.gemm(A_s, B_s, acc)
        T.copy(acc, C)

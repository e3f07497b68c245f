# expect: ok
#
# A float16 atomic rounds at every step (CUDA's atomicAdd on __half): 64 blocks add
# into 16 float16 outputs, and the interpreter's bound is the reassociation bound with
# u = 2⁻¹¹, n = 64 contributions + the initial value (docs/semantics.md §12). The
# bfloat16 outputs go through __nv_bfloat16's atomicAdd the same way, with u = 2⁻⁸:
# 8 contributions per element, as n·u ≥ 1/2 (128 terms) would leave it unjudged.
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((64, 16), T.float16), Out: T.Tensor((16,), T.float16),
         Y: T.Tensor((8, 16), T.bfloat16), Out2: T.Tensor((16,), T.bfloat16)):
    with T.Kernel(64, threads=32) as bx:
        for j in T.Parallel(16):
            T.atomic_add(Out[j], X[bx, j])
        if bx < 8:
            for j in T.Parallel(16):
                T.atomic_add(Out2[j], Y[bx, j], memory_order="relaxed")

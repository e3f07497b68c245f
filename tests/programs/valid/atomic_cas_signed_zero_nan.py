# expect: ok
#
# Float atomic max/min mean IEEE maximumNumber/minimumNumber with +0 > -0 (docs/
# semantics.md §12), in every order: a NaN operand is ignored (a NaN already in the
# element is replaced by the first number), and of two zeros +0 is the max and -0 the
# min. The CUDA's compare-and-swap loop combines with fmaxf/fminf, which give exactly
# that on sm_90. Made observable: each shared element starts at -0, +0 or NaN, 8 rows
# add ±0 (X's sign times 0) or X, and 1/z turns the zero's sign into ±inf.
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((8, 16), T.float32), Zmax: T.Tensor((16,), T.float32),
         Zmin: T.Tensor((16,), T.float32), Nmax: T.Tensor((16,), T.float32),
         Nmin: T.Tensor((16,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        zmax = T.alloc_shared((16,), T.float32)
        zmin = T.alloc_shared((16,), T.float32)
        nmax = T.alloc_shared((16,), T.float32)
        nmin = T.alloc_shared((16,), T.float32)
        for j in T.Parallel(16):
            zmax[j] = -(X[0, j] * 0.0) if X[0, j] > 0 else X[0, j] * 0.0      # -0
            zmin[j] = X[0, j] * 0.0 if X[0, j] > 0 else -(X[0, j] * 0.0)      # +0
            nmax[j] = (X[0, j] - X[0, j]) / (X[0, j] - X[0, j])               # NaN
            nmin[j] = (X[0, j] - X[0, j]) / (X[0, j] - X[0, j])
        for i, j in T.Parallel(8, 16):
            T.atomic_max(zmax[j], X[i, j] * 0.0)
            T.atomic_min(zmin[j], X[i, j] * 0.0)
            T.atomic_max(nmax[j], X[i, j])
            T.atomic_min(nmin[j], X[i, j])
        for j in T.Parallel(16):
            Zmax[j] = 1.0 / zmax[j]
            Zmin[j] = 1.0 / zmin[j]
            Nmax[j] = nmax[j]
            Nmin[j] = nmin[j]

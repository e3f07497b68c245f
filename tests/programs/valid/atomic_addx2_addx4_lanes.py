# expect: ok
#
# TileLang's vector atomics (T.atomic_addx2 / T.atomic_addx4, pointer forms): 8 blocks
# add their rows into shared outputs, each call adding 2 or 4 consecutive elements of
# the last dimension, each lane one contribution (an element atomic, as every analysis
# reads it). The CUDA issues each call as one instruction on sm_90: atomicAdd on half2,
# __nv_bfloat162, float2 and float4, and PTX's atom.global.add.noftz.v4.f16/bf16 for four
# 16-bit lanes (codegen/lower/atomics.py); the first lane's offset is a multiple of the
# lanes (the simulator checks: R505 otherwise). F32toH converts float32 values into the
# float16 lanes as TileLang's __float22half2_rn does. The T.Parallel over 16 pairs in a
# 64-thread block replicates each pair 4×: only replica 0 issues.
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((8, 32), T.float16), Y: T.Tensor((8, 32), T.bfloat16),
         Z: T.Tensor((8, 32), T.float32),
         H2: T.Tensor((32,), T.float16), B2: T.Tensor((32,), T.bfloat16),
         F2: T.Tensor((32,), T.float32), F4: T.Tensor((4, 32), T.float32),
         H4: T.Tensor((32,), T.float16), B4: T.Tensor((32,), T.bfloat16),
         F32toH: T.Tensor((32,), T.float16)):
    with T.Kernel(8, threads=64) as bx:
        for j in T.Parallel(16):
            T.atomic_addx2(H2[j * 2], X[bx, j * 2])
            T.atomic_addx2(B2[j * 2:j * 2 + 2], Y[bx, j * 2:j * 2 + 2])
            T.atomic_addx2(F2[j * 2], Z[bx, j * 2])
            T.atomic_addx2(F32toH[j * 2], Z[bx, j * 2])
        for j in T.Parallel(8):
            T.atomic_addx4(F4[bx % 4, j * 4], Z[bx, j * 4])
            T.atomic_addx4(H4[j * 4], X[bx, j * 4])
            T.atomic_addx4(B4[j * 4:j * 4 + 4], Y[bx, j * 4:j * 4 + 4])

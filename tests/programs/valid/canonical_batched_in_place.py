# expect: ok
#
# Regression (machine-model issue, class 1): a legacy-surface reducer finalized in place
# with batch=4 under the canonical plan. Its transposing finalize folds 256 workspace
# words per output. Generated as an unrolled loop, ptxas -O3 (CUDA 13.0, sm_90) misaddressed
# three loads of an 8-term remainder block and read past the workspace on the GPU
# (compute-sanitizer: "Invalid __shared__ read ... by thread (0,0,0)"), while the
# simulator, which executes the plan's addresses, saw nothing wrong: the plan was right,
# the binary was not. Fold loops are now emitted rolled (codegen/cuda_text.term_loop); the
# GPU suite runs this kernel under compute-sanitizer (tests/gpu_sanitize.sh).
import tilelang.language as T


@T.prim_func
def main(
    a: T.Tensor((128, 64), T.float32),
    out: T.Tensor((128,), T.float32),
):
    with T.Kernel(1, threads=256) as bx:
        a_frag = T.alloc_fragment((128, 64), T.float32)
        T.copy(a, a_frag)
        acc = T.alloc_reducer((128,), T.float32, op="sum", replication="all")
        T.clear(acc)
        for i, j in T.Parallel(128, 64):
            acc[i] += a_frag[i, j]
        T.finalize_reducer(acc, batch=4)
        T.copy(acc, out)

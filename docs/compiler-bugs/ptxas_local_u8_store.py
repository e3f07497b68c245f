"""Minimal reproducer: CUDA 13.0 miscompiles a 16-bit store into a register array indexed
at run time (local memory), sm_90.

Each of 96 threads adds its two inputs into acc[tid / 8] of its own 12-element half array,
then every thread writes its array out. With all inputs 1.0, out[t][tid/8] must be 2.0 and
every other element 0.0. Run on a GPU with pycuda:

    python3 docs/compiler-bugs/ptxas_local_u8_store.py [--sass]

It prints the wrong elements (none when the compiler is right) and, with --sass, the
cuobjdump lines of the byte stores and the conversion that feeds them.
"""
import subprocess
import sys
import tempfile

import numpy as np
import pycuda.autoinit  # noqa: F401
import pycuda.driver as drv
from pycuda.compiler import SourceModule, compile as nvcc_compile

SOURCE = r"""
#include <cuda_fp16.h>
extern "C" __global__ void __launch_bounds__(96) k(const half* __restrict__ in,
                                                  half* __restrict__ out) {
  const int tid = threadIdx.x;
  half acc[12];
  #pragma unroll
  for (int s = 0; s < 12; ++s) acc[s] = __float2half_rn(0.0f);
  #pragma unroll
  for (int s = 0; s < 2; ++s) {
    acc[tid / 8] = __float2half_rn(__half2float(acc[tid / 8]) + __half2float(in[2 * tid + s]));
  }
  #pragma unroll
  for (int s = 0; s < 12; ++s) out[12 * tid + s] = acc[s];
}
"""
OPTIONS = ["-fmad=false"]


def main() -> int:
    major, minor = drv.Context.get_device().compute_capability()
    arch = f"sm_{major}{minor}"
    kernel = SourceModule(SOURCE, arch=arch, options=OPTIONS, no_extern_c=True).get_function("k")
    inputs = np.ones(192, np.float16)
    out = np.zeros(96 * 12, np.float16)
    kernel(drv.In(inputs), drv.Out(out), block=(96, 1, 1), grid=(1, 1))
    want = np.zeros((96, 12), np.float16)
    want[np.arange(96), np.arange(96) // 8] = 2.0
    got = out.reshape(96, 12)
    bad = np.argwhere(got != want)
    print(f"{arch}, nvcc {' '.join(OPTIONS)}: {len(bad)} of {got.size} elements wrong")
    for t, s in bad[:8]:
        print(f"  thread {t} acc[{s}]: got {float(got[t, s])}, expected {float(want[t, s])}")
    if "--sass" in sys.argv:
        cubin = nvcc_compile(SOURCE, arch=arch, options=OPTIONS, no_extern_c=True)
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(cubin)
            f.flush()
            sass = subprocess.run(["cuobjdump", "-sass", f.name], capture_output=True,
                                  text=True).stdout
        for line in sass.splitlines():
            if "STL" in line or "F2I" in line or "LDL" in line:
                print("  " + line.strip().split(";")[0] + ";")
    return 1 if len(bad) else 0


if __name__ == "__main__":
    sys.exit(main())

"""TileLang 0.1.15's CUDA for casts, comparisons and min/max, run on the GPU."""
import re
import sys
import traceback

import numpy as np
import torch
import tilelang
import tilelang.language as T

VALS = [0.5, -0.5, 1.5, -1.5, -0.0, 127.5, 128.0, -128.5, -129.0, 255.5, 256.0, 32767.5,
        32768.0, -32769.0, 65535.5, 65536.0, 2147483647.5, 2147483648.0, -2147483649.0,
        3e9, -3e9, 4294967295.5, 4294967296.0, 2.0**63, -2.0**63, 9.3e18, 1e19, -1e19,
        1.5e19, 2.0**64, 2.0**64 + 8192, 1e30, -1e30, 1e300, float("inf"), float("-inf"),
        float("nan"), -1e-40, 65504.0, 70000.0]
N = 64
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
TORCH = {"int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
         "int64": torch.int64, "uint8": torch.uint8, "uint16": torch.uint16,
         "uint32": torch.uint32, "uint64": torch.uint64, "float32": torch.float32,
         "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
         "bool": torch.bool}


def show_source(kernel, pattern):
    src = kernel.get_kernel_source()
    lines = [l.strip() for l in src.splitlines() if re.search(pattern, l)]
    print("  source:", *lines[:24], sep="\n    ")


def compile_run(name, func, args, pattern):
    try:
        kernel = tilelang.compile(func, out_idx=None, target="cuda")
    except Exception as exc:
        print(f"{name}: COMPILE FAILED {type(exc).__name__}: {str(exc)[-600:]}")
        return None
    show_source(kernel, pattern)
    try:
        kernel(*args)
        torch.cuda.synchronize()
    except Exception as exc:
        print(f"{name}: RUN FAILED {type(exc).__name__}: {str(exc)[-400:]}")
        return None
    return [a.cpu() for a in args]


def cast_probe(src):
    @T.prim_func
    def main(x: T.Tensor((N,), src), o0: T.Tensor((N,), "int8"), o1: T.Tensor((N,), "int16"),
             o2: T.Tensor((N,), "int32"), o3: T.Tensor((N,), "int64"),
             o4: T.Tensor((N,), "uint8"), o5: T.Tensor((N,), "uint16"),
             o6: T.Tensor((N,), "uint32"), o7: T.Tensor((N,), "uint64")):
        with T.Kernel(1, threads=N) as bx:
            for i in T.Parallel(N):
                o0[i] = T.cast(x[i], "int8")
                o1[i] = T.cast(x[i], "int16")
                o2[i] = T.cast(x[i], "int32")
                o3[i] = T.cast(x[i], "int64")
                o4[i] = T.cast(x[i], "uint8")
                o5[i] = T.cast(x[i], "uint16")
                o6[i] = T.cast(x[i], "uint32")
                o7[i] = T.cast(x[i], "uint64")
    vals = (VALS + [0.0] * N)[:N]
    x = torch.tensor(vals, dtype=torch.float64).to(TORCH[src]).cuda()
    outs = [torch.zeros(N, dtype=TORCH[d]).cuda() for d in INTS]
    got = compile_run(f"cast {src}", main, [x] + outs, r"\(\(|o\d\[")
    if got is None:
        return
    xs = got[0].to(torch.float64).numpy()
    for i in range(len(VALS)):
        row = " ".join(f"{d}={int(got[k + 1][i].to(torch.int64) if d != 'uint64' else got[k + 1][i].view(torch.int64))}"
                       for k, d in enumerate(INTS))
        print(f"tlcast {src} {xs[i]!r}: {row}")


def const_probe(value, src, dst):
    @T.prim_func
    def main(o: T.Tensor((N,), dst)):
        with T.Kernel(1, threads=N) as bx:
            for i in T.Parallel(N):
                o[i] = T.cast(T.cast(value, src), dst)
    out = torch.zeros(N, dtype=TORCH[dst]).cuda()
    got = compile_run(f"const {value} {src}->{dst}", main, [out], r"o\[")
    if got is not None:
        v = got[0][0].view(torch.int64) if dst == "uint64" else got[0][0].to(torch.float64)
        print(f"tlconst {value!r} {src}->{dst}: {v.item()!r}")


def compare_probe():
    @T.prim_func
    def main(u: T.Tensor((N,), "uint32"), s: T.Tensor((N,), "int32"), b8: T.Tensor((N,), "int8"),
             u8: T.Tensor((N,), "uint8"), o: T.Tensor((N,), "int32"), p: T.Tensor((N,), "int32"),
             q: T.Tensor((N,), "int32"), r: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=N) as bx:
            for i in T.Parallel(N):
                o[i] = T.if_then_else(u[i] > -1, 1, 0)
                p[i] = T.if_then_else(u[i] > s[i], 1, 0)
                q[i] = T.if_then_else(b8[i] < u8[i], 1, 0)
                r[i] = T.cast(u[i] + s[i], "int32")
    u = torch.tensor([5] * N, dtype=torch.int64).to(torch.uint32).cuda()
    s = torch.tensor([-1] * N, dtype=torch.int32).cuda()
    b8 = torch.tensor([-1] * N, dtype=torch.int8).cuda()
    u8 = torch.tensor([200] * N, dtype=torch.uint8).cuda()
    outs = [torch.zeros(N, dtype=torch.int32).cuda() for _ in range(4)]
    got = compile_run("compare", main, [u, s, b8, u8] + outs, r"\[")
    if got is not None:
        print(f"tlcompare u32(5) > -1: {int(got[4][0])}; u32(5) > s32(-1): {int(got[5][0])}; "
              f"i8(-1) < u8(200): {int(got[6][0])}; u32(5)+s32(-1): {int(got[7][0])}")


def compare_const_probe(op):
    @T.prim_func
    def main(u: T.Tensor((N,), "uint32"), o: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=N) as bx:
            for i in T.Parallel(N):
                if op == "gt":
                    o[i] = T.if_then_else(u[i] > -1, 1, 0)
                else:
                    o[i] = T.if_then_else(u[i] == -1, 1, 0)
    u = torch.tensor([5, 4294967295] * (N // 2), dtype=torch.int64).to(torch.uint32).cuda()
    out = torch.zeros(N, dtype=torch.int32).cuda()
    got = compile_run(f"compare const {op}", main, [u, out], r"o\[")
    if got is not None:
        print(f"tlcmpconst {op} u32 [5, 4294967295] vs -1: {got[1][:2].tolist()}")


def minmax_probe(dtype):
    @T.prim_func
    def main(a: T.Tensor((N,), dtype), b: T.Tensor((N,), dtype), mx: T.Tensor((N,), dtype),
             mn: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=N) as bx:
            for i in T.Parallel(N):
                mx[i] = T.max(a[i], b[i])
                mn[i] = T.min(a[i], b[i])
    pa = [-0.0, 0.0, -0.0, float("nan"), 1.0, float("nan")]
    pb = [0.0, -0.0, -0.0, 1.0, float("nan"), float("nan")]
    a = torch.tensor((pa * N)[:N], dtype=torch.float64).to(TORCH[dtype]).cuda()
    b = torch.tensor((pb * N)[:N], dtype=torch.float64).to(TORCH[dtype]).cuda()
    outs = [torch.zeros(N, dtype=TORCH[dtype]).cuda() for _ in range(2)]
    got = compile_run(f"minmax {dtype}", main, [a, b] + outs, r"m[xn]\[")
    if got is not None:
        for i in range(len(pa)):
            mx, mn = got[2][i].to(torch.float64).item(), got[3][i].to(torch.float64).item()
            print(f"tlminmax {dtype} ({pa[i]}, {pb[i]}): max={mx!r} min={mn!r}")


def int2float_probe(src):
    @T.prim_func
    def main(x: T.Tensor((16,), src), f: T.Tensor((16,), "float32"), d: T.Tensor((16,), "float64"),
             h: T.Tensor((16,), "float16"), bf: T.Tensor((16,), "bfloat16")):
        with T.Kernel(1, threads=16) as bx:
            for i in T.Parallel(16):
                f[i] = T.cast(x[i], "float32")
                d[i] = T.cast(x[i], "float64")
                h[i] = T.cast(x[i], "float16")
                bf[i] = T.cast(x[i], "bfloat16")
    vals = [0, 1, 16777217, 2**63, 2**63 + 2**39 + 1, 2**64 - 1, 2**63 + 1, 2**63 - 1,
            0xFFFFFF7FFFFFFFFF, 0xFFFFFF8000000000, 9007199254740993, 65520, 65519,
            0xFFFFFFFFFFFF0000, 2**53 + 1, 2**24 + 1]
    if src == "int64":
        vals = [v - 2**64 if v >= 2**63 else v for v in vals]
    x = torch.tensor([np.int64(np.uint64(v).view(np.int64)) if v >= 2**63 else v for v in vals],
                     dtype=torch.int64)
    x = (x.view(torch.uint64) if src == "uint64" else x).cuda()
    outs = [torch.zeros(16, dtype=TORCH[t]).cuda() for t in ("float32", "float64", "float16", "bfloat16")]
    got = compile_run(f"int2float {src}", main, [x] + outs, r"\[i\]")
    if got is not None:
        for i, v in enumerate(vals):
            print(f"tli2f {src} {v}: f32={got[1][i].view(torch.int32).item() & 0xFFFFFFFF:08x} "
                  f"f64={got[2][i].view(torch.int64).item() & (2**64 - 1):016x} "
                  f"f16={got[3][i].view(torch.int16).item() & 0xFFFF:04x} "
                  f"bf16={got[4][i].view(torch.int16).item() & 0xFFFF:04x}")


def d2narrow_probe():
    @T.prim_func
    def main(x: T.Tensor((16,), "float64"), f: T.Tensor((16,), "float32"),
             h: T.Tensor((16,), "float16"), bf: T.Tensor((16,), "bfloat16"),
             bff: T.Tensor((16,), "bfloat16"), hf: T.Tensor((16,), "float16")):
        with T.Kernel(1, threads=16) as bx:
            for i in T.Parallel(16):
                f[i] = T.cast(x[i], "float32")
                h[i] = T.cast(x[i], "float16")
                bf[i] = T.cast(x[i], "bfloat16")
                bff[i] = T.cast(T.cast(x[i], "float32"), "bfloat16")
                hf[i] = T.cast(T.cast(x[i], "float32"), "float16")
    vals = [1.0 + 2**-24 + 2**-60, 1.0 + 2**-8 + 2**-40, 1.0 + 2**-11 + 2**-50, 1.0 + 2**-9 + 2**-30,
            3.4028235677973366e38, 3.5e38, 65519.99, 65520.0, 1e-50, -1e-50, 2**-25 * 1.0000002,
            1e300, float("nan"), -0.0, 2**-149 * 0.75, 2**-133 * 1.5]
    x = torch.tensor(vals, dtype=torch.float64).cuda()
    outs = [torch.zeros(16, dtype=TORCH[t]).cuda() for t in ("float32", "float16", "bfloat16", "bfloat16", "float16")]
    got = compile_run("d2narrow", main, [x] + outs, r"\[i\]")
    if got is not None:
        for i, v in enumerate(vals):
            print(f"tld2n {v.hex()}: f={got[1][i].view(torch.int32).item() & 0xFFFFFFFF:08x} "
                  f"h={got[2][i].view(torch.int16).item() & 0xFFFF:04x} "
                  f"bf={got[3][i].view(torch.int16).item() & 0xFFFF:04x} "
                  f"bf_via_f={got[4][i].view(torch.int16).item() & 0xFFFF:04x} "
                  f"h_via_f={got[5][i].view(torch.int16).item() & 0xFFFF:04x}")


def nan_probe():
    @T.prim_func
    def main(x: T.Tensor((16,), "float32"), b: T.Tensor((16,), "bfloat16"), h: T.Tensor((16,), "float16"),
             i: T.Tensor((16,), "int32")):
        with T.Kernel(1, threads=16) as bx:
            for k in T.Parallel(16):
                b[k] = T.cast(x[k], "bfloat16")
                h[k] = T.cast(x[k], "float16")
                i[k] = T.cast(T.cast(x[k], "bfloat16"), "int32")
    bits = [0x7F800001, 0xFF800001, 0x7F80FFFF, 0x7FC00000, 0x7F810000, 0x7FFFFFFF, 0xFFC00001,
            0x7F7FFFFF, 0x7F7F8000, 0x3F808000, 0x3F818000, 0x477FF000, 0, 0, 0, 0]
    x = torch.tensor(np.array(bits, dtype=np.uint32).view(np.int32)).view(torch.float32).cuda()
    outs = [torch.zeros(16, dtype=TORCH[t]).cuda() for t in ("bfloat16", "float16", "int32")]
    got = compile_run("nan", main, [x] + outs, r"\[k\]")
    if got is not None:
        for k, v in enumerate(bits[:12]):
            print(f"tlnan {v:08x}: bf={got[1][k].view(torch.int16).item() & 0xFFFF:04x} "
                  f"h={got[2][k].view(torch.int16).item() & 0xFFFF:04x} i32={got[3][k].item()}")


STEPS = [lambda: cast_probe("float32"), lambda: cast_probe("float64"),
         lambda: cast_probe("float16"), lambda: cast_probe("bfloat16"),
         compare_probe, lambda: compare_const_probe("gt"), lambda: compare_const_probe("eq"),
         lambda: minmax_probe("float32"), lambda: minmax_probe("float64"),
         lambda: minmax_probe("float16"), lambda: minmax_probe("bfloat16"),
         lambda: int2float_probe("uint64"), lambda: int2float_probe("int64"),
         d2narrow_probe, nan_probe,
         lambda: const_probe(3e9, "float32", "int32"), lambda: const_probe(1.5e19, "float64", "uint64"),
         lambda: const_probe(-1.0, "float32", "uint32"), lambda: const_probe(300.0, "float32", "int8"),
         lambda: const_probe(float("nan"), "float32", "int32")]
for step in STEPS:
    try:
        step()
    except Exception:
        print("STEP FAILED:", traceback.format_exc()[-1500:])
    sys.stdout.flush()

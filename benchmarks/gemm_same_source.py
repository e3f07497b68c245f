"""GEMM C = A @ B (fp16 A and B, fp32 accumulation, fp16 C) from ONE TileLang source,
compiled by TileLang and by this project and timed side by side in one process beside
cuBLAS (issue 28; docs/performance.md, "GEMM from one source").

The source is TileLang's examples/gemm/example_gemm.py as the upstream corpus holds it
(tests/upstream/gemm.py; its header names the upstream path and commit, printed with
the table): an eager `@tilelang.jit` `matmul(A, B, block_M, block_N, block_K)` with
M, N, K from `T.const`, 128 threads, `T.Pipelined(K / block_K, num_stages=3)` over
`T.copy` of an A and a B tile to shared memory and `T.gemm` into a fp32 fragment, C
fp16. Per (shape, tiling), default 4096^3 at the example's own 128x128x32, on the same
inputs (A, B standard normal on the fp16 grid, seed 0, as the example's torch.randn):

- `tilelang`: TileLang 0.1.15's `matmul.compile(M=, N=, K=, block_M=, block_N=,
  block_K=)`, the call the example's main() makes, from the same file;
- `fast`, `canonical`: ours, the file with `_bound = matmul(...)` of the same values
  appended (parse_source -> plan_func -> codegen.runner.time_cuda); where both plans
  render the same CUDA, it is timed once and the canonical cell says `=fast`;
- `torch.matmul`: cuBLAS, with torch's reduced-precision fp16 reductions turned off
  (fp32 accumulation, as the others).

A time is the median batch average of --repeat launches after a warm-up, launched back
to back between two CUDA events (codegen.runner.time_launches). TFLOP/s = 2 M N K /
time. Each C is checked once against a float64 numpy reference within its bound
(same_source.Reference: Higham & Mary's bound on the fp32 sums plus C's rounding to
fp16): outside it is WRONG, listed under the table, and the exit status is 1. Our
kernels are compiled with -fmad=false (codegen.runner); TileLang's with its own flags.

On the GPU machine, with .gpu/ set up as benchmarks/gemv_same_source.py says (the
site-cp312, tilelang-0.1.15-site-cp312 and tldeps-site-cp312 archives), from the
project root:

    source .gpu/setup-device.sh && python3 benchmarks/gemm_same_source.py --json gemm.json

Without a GPU, `--dry-run` parses, plans (fast, canonical), renders and compiles (nvcc,
ptxas's figures) every configuration."""
from __future__ import annotations

import argparse
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.corpus_kernel import Call, CorpusKernel, tilelang_cell  # noqa: E402
from benchmarks.same_source import (  # noqa: E402
    OURS, Cell, Reference, add_run_arguments, best_ratios, measured, normal_fp16,
    open_table, ours_cells, parse_list, dry_run_rows, run, time_events, verdict)
from verify_reducer.spec.dtypes import DTYPES  # noqa: E402

KERNEL = CorpusKernel("gemm", "matmul")
TILINGS = ((128, 128, 32),)        # the example's main(): block_M, block_N, block_K
SHAPE = (4096, 4096, 4096)
COLUMNS = ("tilelang", *OURS, "torch.matmul")
AGAINST = {"ours/TL": "tilelang", "ours/cuBLAS": "torch.matmul"}
RATIOS = (*AGAINST, "canon/fast")
FP16_UNIT = DTYPES["float16"].unit_roundoff


@dataclass(frozen=True)
class Config:
    m: int
    n: int
    k: int
    block_m: int
    block_n: int
    block_k: int

    label = property(lambda self: f"{self.m}x{self.n}x{self.k} "
                                  f"{self.block_m}x{self.block_n}x{self.block_k}")
    flops = property(lambda self: 2.0 * self.m * self.n * self.k)

    @property
    def call(self) -> Call:
        return Call(kwargs=(("M", self.m), ("N", self.n), ("K", self.k),
                            ("block_M", self.block_m), ("block_N", self.block_n),
                            ("block_K", self.block_k)))

    def check(self) -> str | None:
        if self.m % self.block_m or self.n % self.block_n or self.k % self.block_k:
            return f"{self.label}: M, N and K must be multiples of block_M, block_N, block_K"
        return None


def dry_run(configs: list[Config]) -> list[dict]:
    print(f"source: {KERNEL.upstream} (tests/upstream/{KERNEL.path.name})")
    return dry_run_rows(configs, lambda cfg: KERNEL.plan(cfg.call),
                        lambda cfg: f"{cfg.label}: {cfg.flops / 1e9:.1f} GFLOP")


# ----------------------------------------------------------------------------- measuring

def make_inputs(cfg: Config, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"A": normal_fp16(rng, (cfg.m, cfg.k)), "B": normal_fp16(rng, (cfg.k, cfg.n)),
            "C": np.zeros((cfg.m, cfg.n), np.float16)}


def judge_c(ref: Reference):
    return lambda c: ref.judge(c, FP16_UNIT, "C")


def torch_cell(tensors, ref: Reference, torch, repeat: int) -> Cell:
    a, b = tensors
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    c = torch.empty((a.shape[0], b.shape[1]), dtype=torch.float16, device="cuda")
    torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    error, wrong = judge_c(ref)(c.float().cpu().numpy())
    return Cell(time_events(torch, lambda: torch.matmul(a, b, out=c), repeat),
                wrong=wrong, error=error)


def targets(rows: list[dict]) -> list[dict]:
    """Issue 28: the GEMM >= 0.8x TileLang and >= 0.8x cuBLAS (the better of our plans)."""
    def missing(row):
        return all(row[p]["us"] is None or row[p]["wrong"] for p in OURS)
    return [verdict(f"ours >= 0.8x {what}", [(r["label"], r["ratios"][key], missing(r))
                                             for r in rows], 0.8, True)
            for what, key in (("TileLang", "ours/TL"), ("cuBLAS", "ours/cuBLAS"))]


def measure(configs: list[Config], repeat: int, json_path: str | None) -> int:
    opened = open_table(json_path, repeat, COLUMNS, RATIOS, "TFLOP/s",
                        {"source": KERNEL.upstream})
    if opened is None:
        return 2
    rt, table = opened
    torch = rt.torch
    table.header(f"GEMM fp16 -> fp16, fp32 accumulation; source {KERNEL.upstream}",
                 max(len(c.label) for c in configs) + 2)
    for cfg in configs:
        data = make_inputs(cfg)
        ref = Reference.of(data["A"], data["B"])
        planned = KERNEL.plan(cfg.call)
        cells = ours_cells(planned, data, lambda out: judge_c(ref)(out["C"]), repeat)
        if torch is None:
            cells.update({c: Cell(reason=rt.missing["torch"])
                          for c in ("tilelang", "torch.matmul")})
        else:
            tensors = tuple(torch.from_numpy(data[n]).to("cuda") for n in ("A", "B"))
            cells["tilelang"] = Cell(reason=rt.missing["tilelang"]) \
                if "tilelang" in rt.missing else measured(lambda: tilelang_cell(
                    KERNEL, cfg.call, tensors, judge_c(ref), torch, repeat))
            cells["torch.matmul"] = measured(lambda: torch_cell(tensors, ref, torch, repeat))
        table.row(cfg.label, cells, cfg.flops, best_ratios(cells, AGAINST),
                  {"config": asdict(cfg), "plans": {p: v.summary() for p, v in planned.items()}})
    return table.finish(targets(table.rows), "issue 28")


# ----------------------------------------------------------------------------- command line

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="x".join(map(str, SHAPE)), help="MxNxK,...")
    parser.add_argument("--tilings", default=",".join("x".join(map(str, t)) for t in TILINGS),
                        help="block_Mxblock_Nxblock_K,... (default: the example's)")
    add_run_arguments(parser, repeat=50)
    args = parser.parse_args(argv)
    try:
        shapes = parse_list(args.shapes, r"(\d+)x(\d+)x(\d+)", "shape MxNxK")
        tilings = parse_list(args.tilings, r"(\d+)x(\d+)x(\d+)", "tiling BMxBNxBK")
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    configs = [Config(*shape, *tiling) for shape in shapes for tiling in tilings]
    return run(parser, args, configs, measure, dry_run, source=KERNEL.upstream)


if __name__ == "__main__":
    sys.exit(main())

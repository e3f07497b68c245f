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
import re
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

@dataclass(frozen=True)
class Source:
    """One upstream GEMM source: its corpus kernel, whether its B is stored (N, K) and
    read transposed, what its factory takes besides M, N, K and the block sizes, and
    its own tilings (what its main() runs on sm_90)."""
    kernel: CorpusKernel
    b_transposed: bool
    schedule_params: bool          # num_stages, thread_num, enable_rasteration are params
    tilings: tuple[str, ...]
    fixed: tuple[int, int]         # (stages, threads) the source itself writes, if not params


SOURCES = {
    # examples/gemm/example_gemm.py: 128 threads and 3 stages written in the source
    "example": Source(CorpusKernel("gemm", "matmul"), False, False, ("128x128x32",), (3, 128)),
    # examples/gemm/example_gemm_autotune.py: get_heuristic_config() for sm_90 (its main()
    # without --use_autotune), rasterization on
    "autotune": Source(CorpusKernel("gemm_autotune", "matmul"), True, True,
                       ("128x256x64s3/256",), (3, 256)),
}
KERNEL = SOURCES["example"].kernel
TILING = r"(\d+)x(\d+)x(\d+)(?:s(\d+)/(\d+))?"    # BMxBNxBK[sSTAGES/THREADS]
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
    source: str = "example"
    stages: int | None = None      # None: the source's own (example: written in it)
    threads: int | None = None

    @property
    def schedule(self) -> tuple[int, int]:
        fixed = SOURCES[self.source].fixed
        return (self.stages or fixed[0], self.threads or fixed[1])

    @property
    def label(self) -> str:
        tiling = f"{self.block_m}x{self.block_n}x{self.block_k}"
        if self.source != "example" or self.stages or self.threads:
            tiling += "s{}/{}".format(*self.schedule)
        source = "" if self.source == "example" else f" {self.source}"
        return f"{self.m}x{self.n}x{self.k}{source} {tiling}"

    flops = property(lambda self: 2.0 * self.m * self.n * self.k)
    kernel = property(lambda self: SOURCES[self.source].kernel)

    @property
    def call(self) -> Call:
        kwargs = [("M", self.m), ("N", self.n), ("K", self.k), ("block_M", self.block_m),
                  ("block_N", self.block_n), ("block_K", self.block_k)]
        if SOURCES[self.source].schedule_params:
            stages, threads = self.schedule
            kwargs += [("num_stages", stages), ("thread_num", threads),
                       ("enable_rasteration", True)]
        return Call(kwargs=tuple(kwargs))

    def check(self) -> str | None:
        if self.m % self.block_m or self.n % self.block_n or self.k % self.block_k:
            return f"{self.label}: M, N and K must be multiples of block_M, block_N, block_K"
        if not SOURCES[self.source].schedule_params and (self.stages or self.threads) and \
                (self.stages, self.threads) != SOURCES[self.source].fixed:
            return (f"{self.label}: the {self.source} source writes its stages and threads "
                    f"itself (s{SOURCES[self.source].fixed[0]}/{SOURCES[self.source].fixed[1]})")
        return None


def upstreams(configs: list[Config]) -> dict[str, str]:
    """Each source the configurations use: its upstream path and commit."""
    return {c.source: c.kernel.upstream for c in configs}


def dry_run(configs: list[Config]) -> list[dict]:
    for name, upstream in upstreams(configs).items():
        print(f"source {name}: {upstream} (tests/upstream/{SOURCES[name].kernel.path.name})")
    return dry_run_rows(configs, lambda cfg: cfg.kernel.plan(cfg.call),
                        lambda cfg: f"{cfg.label}: {cfg.flops / 1e9:.1f} GFLOP")


# ----------------------------------------------------------------------------- measuring

def make_inputs(cfg: Config, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    b_shape = (cfg.n, cfg.k) if SOURCES[cfg.source].b_transposed else (cfg.k, cfg.n)
    return {"A": normal_fp16(rng, (cfg.m, cfg.k)), "B": normal_fp16(rng, b_shape),
            "C": np.zeros((cfg.m, cfg.n), np.float16)}


def reference(cfg: Config, data: dict[str, np.ndarray]) -> Reference:
    b = data["B"]
    return Reference.of(data["A"], b.T if SOURCES[cfg.source].b_transposed else b)


def judge_c(ref: Reference):
    return lambda c: ref.judge(c, FP16_UNIT, "C")


def torch_cell(tensors, ref: Reference, torch, repeat: int, b_transposed: bool) -> Cell:
    """cuBLAS on the same operands; a B stored (N, K) is passed as its transposed view,
    as the autotune example's ref_program does (A @ B.T)."""
    a, b = tensors
    if b_transposed:
        b = b.t()
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    c = torch.empty((a.shape[0], b.shape[1]), dtype=torch.float16, device="cuda")
    torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    error, wrong = judge_c(ref)(c.float().cpu().numpy())
    return Cell(time_events(torch, lambda: torch.matmul(a, b, out=c), repeat),
                wrong=wrong, error=error)


def targets(rows: list[dict]) -> list[dict]:
    """Issue 28: the GEMM >= 0.8x TileLang and >= 0.8x cuBLAS, per shape: the fastest
    of our cells (either plan, any source and tiling) against the fastest of theirs,
    as the attention's targets take each side's best tiling (cuBLAS's cells are one
    kernel timed once a row: its fastest is the strictest)."""
    def usable(row, column):
        cell = row[column]
        return cell["us"] if cell["us"] is not None and not cell["wrong"] else None
    out = []
    for what, column in (("TileLang", "tilelang"), ("cuBLAS", "torch.matmul")):
        cases = []
        for shape in dict.fromkeys(r["label"].split()[0] for r in rows):
            members = [r for r in rows if r["label"].split()[0] == shape]
            ours = [t for r in members for p in OURS if (t := usable(r, p))]
            theirs = [t for r in members if (t := usable(r, column))]
            value = min(theirs) / min(ours) if ours and theirs else None
            cases.append((shape, value, not ours))
        out.append(verdict(f"ours >= 0.8x {what} (best of each)", cases, 0.8, True))
    return out


def measure(configs: list[Config], repeat: int, json_path: str | None) -> int:
    opened = open_table(json_path, repeat, COLUMNS, RATIOS, "TFLOP/s",
                        {"sources": upstreams(configs)})
    if opened is None:
        return 2
    rt, table = opened
    torch = rt.torch
    sources = "; ".join(f"{k}: {v}" for k, v in upstreams(configs).items())
    table.header(f"GEMM fp16 -> fp16, fp32 accumulation; sources {sources}",
                 max(len(c.label) for c in configs) + 2)
    for cfg in configs:
        data = make_inputs(cfg)
        ref = reference(cfg, data)
        planned = cfg.kernel.plan(cfg.call)
        cells = ours_cells(planned, data, lambda out: judge_c(ref)(out["C"]), repeat)
        if torch is None:
            cells.update({c: Cell(reason=rt.missing["torch"])
                          for c in ("tilelang", "torch.matmul")})
        else:
            tensors = tuple(torch.from_numpy(data[n]).to("cuda") for n in ("A", "B"))
            cells["tilelang"] = Cell(reason=rt.missing["tilelang"]) \
                if "tilelang" in rt.missing else measured(lambda: tilelang_cell(
                    cfg.kernel, cfg.call, tensors, judge_c(ref), torch, repeat))
            cells["torch.matmul"] = measured(lambda: torch_cell(
                tensors, ref, torch, repeat, SOURCES[cfg.source].b_transposed))
        table.row(cfg.label, cells, cfg.flops, best_ratios(cells, AGAINST),
                  {"config": asdict(cfg), "plans": {p: v.summary() for p, v in planned.items()}})
    return table.finish(targets(table.rows), "issue 28")


# ----------------------------------------------------------------------------- command line

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="x".join(map(str, SHAPE)), help="MxNxK,...")
    parser.add_argument("--sources", default=",".join(SOURCES),
                        help=f"upstream sources, of {', '.join(SOURCES)} (default: all)")
    parser.add_argument("--tilings", help="BMxBNxBK[sSTAGES/THREADS],... (default: each "
                        "source's own; stages and threads default to the source's)")
    add_run_arguments(parser, repeat=50)
    args = parser.parse_args(argv)
    try:
        shapes = parse_list(args.shapes, r"(\d+)x(\d+)x(\d+)", "shape MxNxK")
        given = parse_tilings(args.tilings) if args.tilings else None
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    names = [n.strip() for n in args.sources.split(",") if n.strip()]
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        parser.error(f"unknown source(s) {', '.join(unknown)}: of {', '.join(SOURCES)}")
    configs = [Config(*shape, *tiling[:3], name, *tiling[3:])
               for name in names for shape in shapes
               for tiling in (given or parse_tilings(",".join(SOURCES[name].tilings)))]
    return run(parser, args, configs, measure, dry_run,
               sources={n: SOURCES[n].kernel.upstream for n in names})


def parse_tilings(text: str) -> list[tuple[int | None, ...]]:
    """BMxBNxBK[sSTAGES/THREADS] items: (bm, bn, bk, stages or None, threads or None)."""
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        match = re.fullmatch(TILING, item)
        if not match:
            raise argparse.ArgumentTypeError(f"{item!r} is not a tiling "
                                             "BMxBNxBK[sSTAGES/THREADS]")
        out.append(tuple(None if g is None else int(g) for g in match.groups()))
    return out


if __name__ == "__main__":
    sys.exit(main())

"""GEMV y = A @ x from ONE TileLang source, compiled by TileLang and by this project and
timed side by side in one process (issue 11; docs/performance.md).

The source is examples/gemv_pipelined.py (T.alloc_reducer, T.Pipelined over K tiles,
T.finalize_reducer into a fragment, T.copy to y; fp16 or bf16 A and x, fp32 accumulation
and y) with M, K, the tiling (BLOCK_M x BLOCK_K, threads) and the dtype set. Per (shape,
dtype, tiling), on the same inputs: TileLang 0.1.15's default plan and its forced
baseline (tl.reducer_force_baseline=True) where tilelang imports; our fast and canonical
plans (parse_source -> plan_func -> time_cuda); per (shape, dtype) torch.mv (cuBLAS) and
a device copy of A, the bandwidth ceiling. A time is the median batch average of
--repeat launches after a warm-up, launched back to back in batches between two CUDA
events (time_cuda's method; torch.cuda.Event for the others), so the host's launch cost
is not in it. TB/s = (A + x + y bytes) / time; the copy counts A read and
written. Each y is checked once against a float64 numpy reference (Reference.bound):
outside it is WRONG, listed under the table, and the exit status is 1.

On the GPU machine, with .gpu/ holding the site-cp312, tilelang-0.1.15-site-cp312 and
tldeps-site-cp312 archives and nvcc on PATH, from the project root (`--shapes all
--dtype both` adds 4096x65536, 65536x4096 and bf16 to the default 16384x16384 fp16):

    source .gpu/setup-device.sh && python3 benchmarks/gemv_same_source.py --json gemv.json

Without a GPU, `--dry-run` generates, parses, plans (fast, canonical) and renders every
configuration and prints each plan and its resources."""
from __future__ import annotations

import argparse
import contextlib
import itertools
import re
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import same_source  # noqa: E402
from benchmarks.cuda_plans import scaled_gemv  # noqa: E402
from benchmarks.same_source import (  # noqa: E402,F401  (the split-K benchmark's too)
    OURS, Cell, Planned, Reference, Runtimes, Table, add_run_arguments, measured, no_gpu,
    ours_cell, parse_list, plan_ours, run, time_events, verdict)
from verify_reducer.codegen import tilelang_backend  # noqa: E402
from verify_reducer.spec.dtypes import DTYPES  # noqa: E402
from verify_reducer.spec.frontend import parse_source  # noqa: E402

TILINGS = ((64, 256, 256), (128, 128, 256), (32, 512, 256), (16, 1024, 256), (32, 64, 128))
SHAPES = ((16384, 16384), (4096, 65536), (65536, 4096))
TILELANG = {"tl-default": {}, "tl-baseline": {"tl.reducer_force_baseline": "true"}}
COLUMNS = ("tl-default", "tl-baseline", "fast", "canonical")


@dataclass(frozen=True)
class Config:
    m: int
    k: int
    dtype: str                     # of A and x; the accumulation and y are float32
    block_m: int
    block_k: int
    threads: int

    group = property(lambda self: f"{self.m}x{self.k} {self.dtype}")
    tiling = property(lambda self: f"{self.block_m}x{self.block_k}/{self.threads}")
    label = property(lambda self: f"{self.group} {self.tiling}")

    @property
    def nbytes(self) -> int:       # A and x read once, y (float32) written once
        e = DTYPES[self.dtype].bits // 8
        return self.m * self.k * e + self.k * e + self.m * 4

    def check(self) -> str | None:
        if self.m % self.block_m or self.k % self.block_k:
            return (f"shape {self.m}x{self.k} is not a multiple of the tile "
                    f"{self.block_m}x{self.block_k}")
        return None


def gemv_source(cfg: Config) -> str:
    """The example at cfg: scaled_gemv sets M and K; each tile constant and the dtype is
    set here exactly once (a miss would time another kernel than the table names)."""
    text = scaled_gemv(cfg.m, cfg.k)
    for name, value in (("BLOCK_M", cfg.block_m), ("BLOCK_K", cfg.block_k),
                        ("THREADS", cfg.threads), ("dtype", f"T.{cfg.dtype}")):
        text, n = re.subn(rf"^{name} = .*$", f"{name} = {value}", text, flags=re.M)
        if n != 1:
            raise ValueError(f"{name} is assigned {n} times in the example, not once")
    return text


# ----------------------------------------------------------------------------- our plans

def plan_config(cfg: Config) -> tuple[object | None, dict[str, Planned]]:
    """(the parsed func or None, {planner: Planned})."""
    try:
        func = parse_source(gemv_source(cfg), f"gemv_{cfg.block_m}x{cfg.block_k}.py").func()
    except Exception as exc:       # a DiagnosticError, or a frontend bug
        why = f"parse: {type(exc).__name__}: {exc}"
        return None, {p: Planned(None, why, why) for p in OURS}
    return func, {p: plan_ours(func, p) for p in OURS}


def dry_run(configs: list[Config]) -> list[dict]:
    rows = []
    for cfg in configs:
        func, planned = plan_config(cfg)
        grid = func.kernel.grid if func is not None else "?"
        print(f"{cfg.label}: grid {grid}, {cfg.nbytes / 2**20:.1f} MiB per GEMV")
        for planner, p in planned.items():
            print(f"  {planner:<10} {p.describe()}")
        rows.append({"label": cfg.label, "config": asdict(cfg),
                     "plans": {k: p.summary() for k, p in planned.items()}})
    return rows


# ----------------------------------------------------------------------------- data

def make_inputs(m: int, k: int, dtype: str, seed: int = 0) -> dict[str, np.ndarray]:
    """A and x uniform in [-1, 1) on dtype's grid (bf16 in float32 storage), y zeros.
    numpy's generator, not verify.oracle.inputs.generate: that hashes every element (half a
    minute for 2^28 of them) for the same distribution. Chunks bound the temporaries."""
    dt, rng = DTYPES[dtype], np.random.default_rng(seed)
    a = np.empty((m, k), dtype=dt.np)
    rows = max(1, (1 << 22) // k)
    for i in range(0, m, rows):
        a[i:i + rows] = dt.quantize(rng.random((min(rows, m - i), k), np.float32) * 2 - 1)
    x = dt.quantize(rng.random(k, np.float32) * 2 - 1)
    return {"A": a, "x": x, "y": np.zeros(m, np.float32)}


# ----------------------------------------------------------------------------- measuring

def discover_runtimes() -> Runtimes:
    return same_source.discover_runtimes(TILELANG)


def judge_y(ref: Reference):
    """Our outputs' judge: y within the reference's bound."""
    return lambda outputs: ref.judge(outputs["y"])


def tilelang_cell(rt: Runtimes, col: str, path: Path, tensors, ref: Reference,
                  repeat: int) -> Cell:
    """TileLang's kernel for the file at path. run_tilelang runs a kernel once and drops
    it, so this compiles with the backend's loader and checked pass configs itself."""
    torch = rt.torch
    with contextlib.redirect_stdout(sys.stderr):      # TileLang logs on stdout
        try:
            main = tilelang_backend.load_program_module(str(path)).main
        except Exception as exc:
            raise tilelang_backend.TileLangFailed("import", exc) from exc
        try:
            kernel = rt.tilelang.compile(main, out_idx=None, target="cuda",
                                         pass_configs=rt.pass_configs[col] or None)
        except Exception as exc:
            raise tilelang_backend.TileLangFailed("compile", exc) from exc
    a, x = tensors
    y = torch.zeros(a.shape[0], dtype=torch.float32, device="cuda")
    kernel(a, x, y)
    torch.cuda.synchronize()
    error, wrong = ref.judge(y.cpu().numpy())
    return Cell(time_events(torch, lambda: kernel(a, x, y), repeat), wrong=wrong, error=error)


def torch_cells(torch, tensors, dtype: str, ref: Reference, repeat: int) -> dict[str, Cell]:
    a, x = tensors

    def mv() -> Cell:
        out = torch.empty(a.shape[0], dtype=a.dtype, device="cuda")
        torch.mv(a, x, out=out)
        error, wrong = ref.judge(out.float().cpu().numpy(), DTYPES[dtype].unit_roundoff)
        return Cell(time_events(torch, lambda: torch.mv(a, x, out=out), repeat),
                    wrong=wrong, error=error)

    def copy() -> Cell:
        dst = torch.empty_like(a)
        us = time_events(torch, lambda: dst.copy_(a), repeat)
        return Cell(us, wrong=None if torch.equal(dst, a) else "the copy differs from A")
    return {"torch.mv": measured(mv), "copy": measured(copy)}


def to_device(torch, data: dict, dtype: str):
    wanted = torch.bfloat16 if dtype == "bfloat16" else torch.float16
    return tuple(torch.from_numpy(data[n]).to("cuda").to(wanted) for n in ("A", "x"))


# ----------------------------------------------------------------------------- the report

def ratios(cells: dict[str, Cell], nbytes: int, copy_tbps: float | None) -> dict:
    tl, fast, can = (cells[c].us if cells[c].usable else None
                     for c in ("tl-default", "fast", "canonical"))
    best = max((cells[c].rate(nbytes) for c in OURS if cells[c].usable), default=None)
    return {"canon/TL": tl / can if tl and can else None,        # throughput ratio
            "canon/fast": can / fast if can and fast else None,  # time ratio
            "best/copy": best / copy_tbps if best and copy_tbps else None}


class Report(Table):
    """same_source.Table with a group per (shape, dtype): its header names torch.mv and
    the copy of A, measured once, and the JSON keeps them under "groups"."""

    def __init__(self, json_path: str | None, environment: dict):
        super().__init__(json_path, environment, COLUMNS, ("canon/TL", "canon/fast",
                                                           "best/copy"), "TB/s", 22, 2)
        self.groups: list[dict] = []

    def group(self, cfg: Config, cells: dict[str, Cell]) -> float | None:
        """Print the group's header and baselines; return its copy's TB/s."""
        copied = 2 * cfg.m * cfg.k * DTYPES[cfg.dtype].bits // 8     # A read and written
        mv = self.cell_text(cfg.group, "torch.mv", cells["torch.mv"], cfg.nbytes)
        cp = self.cell_text(cfg.group, "copy", cells["copy"], copied)
        self.groups.append({"label": cfg.group, "copy_bytes": copied,
                            "torch.mv": cells["torch.mv"].summary(cfg.nbytes),
                            "copy": cells["copy"].summary(copied)})
        self.header(f"{cfg.group}: torch.mv {mv} | copy of A {cp}", 14, "tiling")
        return cells["copy"].rate(copied) if cells["copy"].usable else None

    def gemv_row(self, cfg: Config, cells: dict[str, Cell], planned: dict, copy_tbps) -> None:
        self.row(cfg.label, cells, cfg.nbytes, ratios(cells, cfg.nbytes, copy_tbps), {
            "group": cfg.group, "config": asdict(cfg), "bytes": cfg.nbytes,
            "copy_tbps": copy_tbps, "plans": {p: v.summary() for p, v in planned.items()}},
            shown=cfg.tiling)

    def write(self) -> None:
        self.doc["groups"] = self.groups
        super().write()


def targets(rows: list[dict]) -> list[dict]:
    """Issue 11's targets over the rows (as in the JSON), each case (where, value, ours
    has no usable number there)."""
    def usable(row, *cols):
        return all(row[c]["us"] is not None and row[c]["wrong"] is None for c in cols)
    tl = [(r["label"], r["ratios"]["canon/TL"], not usable(r, "canonical")) for r in rows]
    fast = [(r["label"], r["ratios"]["canon/fast"], not usable(r, "canonical", "fast"))
            for r in rows]
    copy = []
    for group, members in itertools.groupby(rows, lambda r: r["group"]):
        best = max((r for r in members if usable(r, "canonical")),
                   key=lambda r: r["canonical"]["tbps"], default=None)
        copy.append((group, None, True) if best is None else (best["label"], best[
            "canonical"]["tbps"] / best["copy_tbps"] if best["copy_tbps"] else None, False))
    return [verdict("canonical >= 0.95x TileLang default at every tiling", tl, 0.95, True),
            verdict("canonical >= 0.90x copy at the best tiling", copy, 0.90, True),
            verdict("canonical/fast <= 1.05 at every tiling", fast, 1.05, False)]


def measure(configs: list[Config], repeat: int, json_path: str | None) -> int:
    rt = discover_runtimes()
    if no_gpu(rt):
        return 2
    report = Report(json_path, {**rt.environment, "repeat": repeat,
                                **{f"missing {k}": v for k, v in rt.missing.items()}})
    with tempfile.TemporaryDirectory(prefix="gemv_same_source_") as tmp:
        for _, group in itertools.groupby(configs, lambda c: c.group):
            measure_group(list(group), rt, report, Path(tmp), repeat)
    return report.finish(targets(report.rows), "issue 11")


def measure_group(group: list[Config], rt: Runtimes, report: Report, tmp: Path,
                  repeat: int) -> None:
    """One (shape, dtype): its inputs, reference and baselines once, then each tiling."""
    first = group[0]
    data = make_inputs(first.m, first.k, first.dtype)
    ref = Reference.of(data["A"], data["x"])
    tensors, no_torch = None, rt.missing.get("torch")
    if rt.torch is not None:
        try:
            tensors = to_device(rt.torch, data, first.dtype)
        except Exception as exc:   # out of memory, a broken device: torch's columns only
            no_torch = f"torch upload: {type(exc).__name__}: {exc}"
    shared = torch_cells(rt.torch, tensors, first.dtype, ref, repeat) if tensors else \
        {"torch.mv": Cell(reason=no_torch), "copy": Cell(reason=no_torch)}
    copy_tbps = report.group(first, shared)
    for cfg in group:
        path = tmp / f"gemv_{cfg.label.replace(' ', '_').replace('/', '_t')}.py"
        path.write_text(gemv_source(cfg))
        _, planned = plan_config(cfg)
        cells = {col: Cell(reason=rt.missing.get(col) or no_torch)
                 if col in rt.missing or tensors is None else
                 measured(lambda: tilelang_cell(rt, col, path, tensors, ref, repeat))
                 for col in TILELANG}
        cells.update({p: measured(lambda: ours_cell(planned[p], data, judge_y(ref), repeat))
                      for p in OURS})
        report.gemv_row(cfg, cells, planned, copy_tbps)


# ----------------------------------------------------------------------------- command line

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="16384x16384",
                        help="MxK,... or 'all' (16384x16384, 4096x65536, 65536x4096)")
    parser.add_argument("--tilings", default=",".join(f"{m}x{k}/{t}" for m, k, t in TILINGS),
                        help="BLOCK_MxBLOCK_K/THREADS,... (default: the five of issue 11)")
    parser.add_argument("--dtype", choices=("float16", "bfloat16", "both"), default="float16")
    parser.add_argument("--quick", action="store_true", help="the first shape, 20 launches")
    add_run_arguments(parser, repeat=100)
    args = parser.parse_args(argv)
    try:
        shapes = list(SHAPES) if args.shapes == "all" else \
            parse_list(args.shapes, r"(\d+)x(\d+)", "shape MxK")
        tilings = parse_list(args.tilings, r"(\d+)x(\d+)/(\d+)", "tiling BMxBK/THREADS")
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    if args.quick:
        shapes, args.repeat = shapes[:1], min(args.repeat, 20)
    dtypes = ("float16", "bfloat16") if args.dtype == "both" else (args.dtype,)
    configs = [Config(m, k, d, *t) for (m, k), d, t in itertools.product(shapes, dtypes, tilings)]
    return run(parser, args, configs, measure, dry_run)

if __name__ == "__main__":
    sys.exit(main())

"""Split-K GEMV y += A @ x for skinny A, from ONE TileLang source, compiled by TileLang
and by this project and timed side by side in one process (issue 27; docs/performance.md).

The source is examples/gemv_splitk.py: the grid splits the row tiles and K into SPLIT
slices; each block reduces its slice with T.alloc_reducer over T.Pipelined tiles,
finalizes once and adds its partial row sums into y with T.atomic_add. Per tiling
(BLOCK_M x BLOCK_K, SPLIT, threads), on the same inputs (default 256 x 65536 fp16, where
one block per row tile would leave most SMs idle): TileLang 0.1.15's default plan and
its forced baseline where tilelang imports, our fast and canonical plans; once per shape
torch.mv (cuBLAS) and a device copy of A (read and written), the bandwidth ceiling
measured the same way (A is 32 MiB: it stays in the H200's 50 MB L2 across back-to-back
launches, for the copy as for the GEMVs). Times and the correctness judgement are
benchmarks/gemv_same_source.py's (median batch average between CUDA events; y checked
once against a float64 reference within its bound, from zeros: the atomic adds
accumulate over the timed launches, which changes nothing of the work). TB/s = (A + x +
y bytes) / time. Exit status 1 when a result is WRONG.

On the GPU machine, from the project root, with .gpu/ set up as gemv_same_source says:

    source .gpu/setup-device.sh && python3 benchmarks/gemv_splitk.py --json splitk.json

Without a GPU, `--dry-run` generates, parses, plans, renders and compiles (nvcc, ptxas's
figures) every tiling."""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import gemv_same_source as gemv  # noqa: E402
from benchmarks.gemv_same_source import (  # noqa: E402
    TILELANG, discover_runtimes, judge_y, make_inputs, tilelang_cell, to_device, torch_cells)
from benchmarks.same_source import (  # noqa: E402
    OURS, Cell, Planned, Reference, add_run_arguments, dry_run_rows, measured, ours_cell,
    parse_list, plan_ours, run, verdict)
from verify_reducer.spec.dtypes import DTYPES  # noqa: E402
from verify_reducer.spec.frontend import parse_source  # noqa: E402

EXAMPLE = ROOT / "examples" / "gemv_splitk.py"
TILINGS = ((16, 256, 32, 128), (32, 128, 64, 128), (16, 512, 16, 128), (8, 512, 64, 128),
           (64, 128, 16, 256))
COLUMNS = (*TILELANG, *OURS)


@dataclass(frozen=True)
class Config(gemv.Config):
    """gemv_same_source's configuration (its bytes, its group) with the K split."""
    split: int = 1

    tiling = property(lambda self: f"{self.block_m}x{self.block_k} split {self.split}"
                                   f"/{self.threads}")

    def check(self) -> str | None:
        if self.m % self.block_m or self.k % (self.split * self.block_k):
            return (f"{self.label}: M must be a multiple of BLOCK_M and K of "
                    f"SPLIT * BLOCK_K")
        return None


def splitk_source(cfg: Config) -> str:
    """The example with each constant set exactly once (a miss would time another
    kernel than the table names)."""
    text = EXAMPLE.read_text()
    for name, value in (("M", cfg.m), ("K", cfg.k), ("BLOCK_M", cfg.block_m),
                        ("BLOCK_K", cfg.block_k), ("SPLIT", cfg.split),
                        ("THREADS", cfg.threads), ("dtype", f"T.{cfg.dtype}")):
        text, n = re.subn(rf"^{name} = .*$", f"{name} = {value}", text, flags=re.M)
        if n != 1:
            raise ValueError(f"{name} is assigned {n} times in the example, not once")
    return text


def plan_config(cfg: Config) -> dict[str, Planned]:
    try:
        func = parse_source(splitk_source(cfg), f"gemv_splitk_{cfg.block_m}.py").func()
    except Exception as exc:       # a DiagnosticError, or a frontend bug
        why = f"parse: {type(exc).__name__}: {exc}"
        return {p: Planned(None, why, why) for p in OURS}
    return {p: plan_ours(func, p) for p in OURS}


def measure(configs: list[Config], repeat: int, json_path: str | None) -> int:
    """The table and targets printed, the JSON document written; the exit status (1:
    a result was WRONG)."""
    rt = discover_runtimes()
    doc = {"command": " ".join(sys.argv), "date": time.strftime("%Y-%m-%d %H:%M"),
           "environment": {**rt.environment, "repeat": repeat,
                           **{f"missing {k}": v for k, v in rt.missing.items()}},
           "groups": [], "rows": []}
    first = configs[0]
    data = make_inputs(first.m, first.k, first.dtype)
    ref = Reference.of(data["A"], data["x"])
    tensors = to_device(rt.torch, data, first.dtype) if rt.torch is not None else None
    base = torch_cells(rt.torch, tensors, first.dtype, ref, repeat) if tensors else \
        {"torch.mv": Cell(reason=rt.missing.get("torch")),
         "copy": Cell(reason=rt.missing.get("torch"))}
    copied = 2 * first.m * first.k * DTYPES[first.dtype].bits // 8
    copy_tbps = base["copy"].rate(copied) if base["copy"].usable else None
    doc["groups"].append({"label": first.group, "copy_bytes": copied,
                          "torch.mv": base["torch.mv"].summary(first.nbytes),
                          "copy": base["copy"].summary(copied)})
    wrong = sum(bool(c.wrong) for c in base.values())
    print(f"== {first.group}: torch.mv {_text(base['torch.mv'], first.nbytes)} | copy of A "
          f"{_text(base['copy'], copied)}   (µs TB/s)")
    print(f"{'tiling':<22}" + "".join(f"{c:<20}" for c in COLUMNS) +
          f"{'best/TL':>9}{'best/copy':>11}")
    with tempfile.TemporaryDirectory(prefix="gemv_splitk_") as tmp:
        for cfg in configs:
            path = Path(tmp) / f"splitk_{cfg.block_m}_{cfg.block_k}_{cfg.split}.py"
            path.write_text(splitk_source(cfg))
            planned = plan_config(cfg)
            cells = {col: measured(lambda: tilelang_cell(rt, col, path, tensors, ref, repeat))
                     if tensors is not None and col not in rt.missing else
                     Cell(reason=rt.missing.get(col) or rt.missing.get("torch"))
                     for col in TILELANG}
            cells.update({p: measured(lambda: ours_cell(planned[p], data, judge_y(ref), repeat))
                          for p in OURS})
            wrong += sum(bool(c.wrong) for c in cells.values())
            best = max((cells[p].rate(cfg.nbytes) for p in OURS if cells[p].usable),
                       default=None)
            tl = cells["tl-default"].rate(cfg.nbytes) if cells["tl-default"].usable else None
            ratios = {"best/TL": best / tl if best and tl else None,
                      "best/copy": best / copy_tbps if best and copy_tbps else None}
            print(f"{cfg.tiling:<22}" + "".join(f"{_text(cells[c], cfg.nbytes):<20}"
                                                for c in COLUMNS) +
                  "".join(f"{'n/a' if v is None else f'{v:.2f}':>{w}}"
                          for v, w in zip(ratios.values(), (9, 11))), flush=True)
            doc["rows"].append({"label": cfg.label, "config": asdict(cfg),
                                "bytes": cfg.nbytes, "copy_tbps": copy_tbps,
                                "ratios": ratios,
                                **{c: cells[c].summary(cfg.nbytes) for c in COLUMNS},
                                "plans": {p: v.summary() for p, v in planned.items()}})
    doc["targets"] = _targets(doc["rows"])
    print("\ntargets (issue 27):")
    for t in doc["targets"]:
        print(f"  {t['status']:<4} {t['target']}: {t['detail']}")
    reasons = {c["reason"] for r in doc["rows"] for c in (r[k] for k in COLUMNS)
               if c["reason"]} | {c.reason for c in base.values() if c.reason}
    for reason in sorted(r for r in reasons if r):
        print(f"  n/a: {reason}")
    if wrong:
        print(f"\n!!! {wrong} WRONG RESULT(S) !!!")
    if json_path:
        Path(json_path).write_text(json.dumps(doc, indent=1))
    return 1 if wrong else 0


def _text(cell: Cell, nbytes: int) -> str:
    if not cell.us:
        return "n/a"
    return f"{cell.us:.1f} {cell.rate(nbytes):.2f}" + (" WRONG" if cell.wrong else "")


def _targets(rows: list[dict]) -> list[dict]:
    """At the best tiling of ours: >= 0.95x TileLang's default there... and at every
    tiling TileLang runs; the best of ours >= 0.85x the copy."""
    def tbps(row, col):
        c = row[col]
        return c["tbps"] if c["us"] is not None and c["wrong"] is None else None
    tl = [(r["label"], r["ratios"]["best/TL"],
           all(tbps(r, p) is None for p in OURS)) for r in rows if tbps(r, "tl-default")]
    best = max(rows, key=lambda r: max(tbps(r, p) or 0 for p in OURS), default=None)
    copy = [] if best is None else [(best["label"], best["ratios"]["best/copy"],
                                     all(tbps(best, p) is None for p in OURS))]
    return [verdict("ours >= 0.95x TileLang default at every tiling", tl, 0.95, True),
            verdict("ours >= 0.85x copy at the best tiling", copy, 0.85, True)]


def dry_run(configs: list[Config]) -> list[dict]:
    return dry_run_rows(configs, plan_config,
                        lambda cfg: f"{cfg.label}: {cfg.nbytes / 2**20:.1f} MiB per GEMV")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="256x65536", help="MxK")
    parser.add_argument("--tilings", default=",".join(f"{m}x{k}s{s}/{t}"
                                                      for m, k, s, t in TILINGS),
                        help="BLOCK_MxBLOCK_KsSPLIT/THREADS,...")
    parser.add_argument("--dtype", choices=("float16", "bfloat16"), default="float16")
    add_run_arguments(parser, repeat=200)
    args = parser.parse_args(argv)
    try:
        ((m, k),) = parse_list(args.shape, r"(\d+)x(\d+)", "shape MxK")
        tilings = parse_list(args.tilings, r"(\d+)x(\d+)s(\d+)/(\d+)",
                             "tiling BMxBKsSPLIT/THREADS")
    except (argparse.ArgumentTypeError, ValueError) as exc:
        parser.error(str(exc))
    configs = [Config(m, k, args.dtype, bm, bk, threads, split)
               for bm, bk, split, threads in tilings]
    return run(parser, args, configs, measure, dry_run)

if __name__ == "__main__":
    sys.exit(main())

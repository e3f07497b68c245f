"""How many blocks per SM should a streaming GEMV run? One canonical kernel per
configuration, launched side by side in one process at every resident-block count from
the most its resources allow down to 1: the measurements behind the plan's occupancy
cap (codegen.occupancy; docs/performance.md).

Each kernel is compiled once and launched
  - `plan`: exactly as codegen.runner launches it (the plan's dynamic shared bytes,
    padded where the plan caps the blocks per SM);
  - `o=N` for each N from the most that fit by its arrays down to 1: with the shared
    memory carveout at its maximum and the launch's dynamic shared memory padded so that
    only N blocks fit on an SM (the kernel addresses the plan's arrays only).
Each column is the median of `--repeat` launches (codegen.runner.time_launches), then
its ratio to `plan`, and the count of waves ceil(blocks / (SMs x N)). Residency is
computed by the target table's rules (spec.target.Target.resident_blocks, with ptxas's
register count); the device's own figures are read from the driver and every one that
differs from the table is printed first.

On the GPU machine (pycuda, nvcc), from the project root:

    source .gpu/setup-device.sh && python3 benchmarks/occupancy_sweep.py [--shapes all]
        [--dtype both] [--tilings 128x128/256,...] [--repeat 100] [--json FILE]

Timing only: the results are not compared (padding changes no address); the same kernels
are checked against numpy by benchmarks/gemv_same_source.py and the GPU suite."""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.gemv_same_source import (SHAPES, TILINGS, Config, gemv_source,  # noqa: E402
                                         make_inputs, parse_list, plan_ours)
from verify_reducer.codegen import runner  # noqa: E402
from verify_reducer.codegen.cuda import render  # noqa: E402
from verify_reducer.codegen.plan_text import occupancy_text  # noqa: E402
from verify_reducer.spec.frontend import parse_source  # noqa: E402
from verify_reducer.spec.target import target  # noqa: E402

class Device:
    """The per-SM limits of the device, read from the driver, to hold against the
    target table that the plan's occupancy is computed from (spec.target)."""

    FIELDS = {"sms": "MULTIPROCESSOR_COUNT", "threads_per_sm": "MAX_THREADS_PER_MULTIPROCESSOR",
              "registers_per_sm": "MAX_REGISTERS_PER_MULTIPROCESSOR",
              "shared_per_sm": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
              "dynamic_shared_bytes": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
              "shared_reserved": "RESERVED_SHARED_MEMORY_PER_BLOCK",
              "blocks_per_sm": "MAX_BLOCKS_PER_MULTIPROCESSOR"}

    def __init__(self, driver):
        dev = driver.Context.get_device()
        self.name = dev.name()
        self.figures = {}
        for name, attribute in self.FIELDS.items():
            found = getattr(driver.device_attribute, attribute, None)
            self.figures[name] = dev.get_attribute(found) if found is not None else None

    def differences(self, limits) -> list[str]:
        """Where the device's figures differ from the target table's (or are unknown)."""
        return [f"{name}: device {value}, table {getattr(limits, name)}"
                for name, value in self.figures.items()
                if name != "sms" and value != getattr(limits, name)]


def sweep(cfg: Config, limits, driver, sms: int, repeat: int) -> dict:
    func = parse_source(gemv_source(cfg), "gemv.py").func()
    planned = plan_ours(func, "canonical")
    if planned.plan is None or planned.reason:
        return {"config": cfg.label, "error": planned.reason or planned.chosen}
    source = render(planned.plan)
    kernel = runner._module(source, driver).get_function(source.kernel_name)
    launch = runner.launch_arguments(source, kernel, driver)     # as the plan launches
    fa = driver.function_attribute
    regs, static = kernel.get_attribute(fa.NUM_REGS), kernel.get_attribute(fa.SHARED_SIZE_BYTES)
    data = make_inputs(cfg.m, cfg.k, cfg.dtype)
    buffers = [driver.to_device(runner._to_device_layout(
        np.asarray(data[p.name]).reshape(p.shape), p.dtype)) for p in planned.plan.func.params]

    def events():
        start, stop = driver.Event(), driver.Event()
        return start, stop, lambda: stop.time_since(start)

    def timed(shared: int) -> float:
        args = dict(launch, shared=shared)
        return runner.time_launches(lambda: kernel(*buffers, **args), events,
                                    driver.Context.synchronize, repeat)

    def resident(shared: int) -> int:
        return limits.resident_blocks(threads, static + shared, regs)

    blocks, threads = math.prod(source.grid), math.prod(source.block)
    used = planned.plan.resources.dynamic_shared_bytes
    occupancy = planned.plan.resources.occupancy
    row = {"config": cfg.label, "blocks": blocks, "threads": threads, "registers": regs,
           "static_shared": static, "dynamic_shared": used, "cap": occupancy.cap,
           "plan": {"resident": resident(launch["shared"]), "shared": launch["shared"],
                    "us": timed(launch["shared"])}, "runs": []}
    carveout = getattr(fa, "PREFERRED_SHARED_MEMORY_CARVEOUT", None)
    if carveout is not None:
        kernel.set_attribute(carveout, 100)
    kernel.set_attribute(fa.MAX_DYNAMIC_SHARED_SIZE_BYTES, limits.dynamic_shared_bytes - static)
    most = resident(used)
    for o in range(most, 0, -1):
        shared = max(used, limits.shared_for(o) - static) if o < most else used
        got = resident(shared)
        row["runs"].append({"resident": got, "shared": shared, "us": timed(shared),
                            "waves": -(-blocks // (sms * got))})
    for b in buffers:
        b.free()
    return row


def dry_run(cfg: Config) -> str:
    """The plan's occupancy at cfg and the counts a sweep launches (by threads and shared
    memory: ptxas's registers, known only once compiled, may lower them)."""
    planned = plan_ours(parse_source(gemv_source(cfg), "gemv.py").func(), "canonical")
    if planned.plan is None or planned.reason:
        return f"{cfg.label:<28} cannot run: {planned.reason or planned.chosen}"
    res = planned.plan.resources
    most = res.occupancy.resident
    return (f"{cfg.label:<28} {occupancy_text(res).strip()}\n{'':<28} sweep: o = "
            f"{', '.join(str(o) for o in range(most, 0, -1))}")


def show(row: dict) -> None:
    if "error" in row:
        print(f"{row['config']:<28} cannot run: {row['error']}", flush=True)
        return
    plan = row["plan"]
    cells = [f"o={r['resident']} {r['us']:7.1f} ({r['us'] / plan['us']:.2f}, {r['waves']} w)"
             for r in row["runs"]]
    print(f"{row['config']:<28} {row['blocks']:5d} blocks, {row['registers']} regs, "
          f"{row['dynamic_shared'] + row['static_shared']} B shared | plan o={plan['resident']}"
          f" {plan['us']:7.1f} | " + "  ".join(cells), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="65536x4096", help="MxK,... or all")
    parser.add_argument("--tilings", default=",".join(f"{m}x{k}/{t}" for m, k, t in TILINGS))
    parser.add_argument("--dtype", choices=("float16", "bfloat16", "both"), default="both")
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--dry-run", action="store_true",
                        help="no GPU: plan each configuration and print its occupancy and "
                             "the resident-block counts a sweep would launch")
    args = parser.parse_args(argv)
    shapes = SHAPES if args.shapes == "all" else parse_list(args.shapes, r"(\d+)x(\d+)", "shape")
    tilings = parse_list(args.tilings, r"(\d+)x(\d+)/(\d+)", "tiling")
    dtypes = ("float16", "bfloat16") if args.dtype == "both" else (args.dtype,)
    configs = [Config(m, k, dtype, bm, bk, t) for (m, k) in shapes for dtype in dtypes
               for (bm, bk, t) in tilings]
    if args.dry_run:
        for cfg in configs:
            print(dry_run(cfg))
        return 0
    driver = runner._driver()
    device = Device(driver)
    limits = target()
    sms = device.figures["sms"]
    print(f"{device.name}: {sms} SMs; {limits.name} table: {limits.shared_per_sm} B shared, "
          f"{limits.registers_per_sm} registers, {limits.threads_per_sm} threads per SM, "
          f"{limits.shared_reserved} B reserved per block")
    for line in device.differences(limits):
        print(f"  !! {line}: residency below is computed from the table")
    rows = []
    for cfg in configs:
        rows.append(sweep(cfg, limits, driver, sms, args.repeat))
        show(rows[-1])
        if args.json:
            Path(args.json).write_text(json.dumps(
                {"device": {"name": device.name, **device.figures}, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

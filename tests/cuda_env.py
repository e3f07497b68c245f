"""What the CUDA tests need from the machine, and the cases they run.

- `nvcc`: the compiler on PATH (compile-only tests run wherever it exists);
- `gpu`: pycuda importable and a device answering (codegen.runner's own check);
- `cases()`: every example and every tests/programs/valid program, in every plan that
  applies (canonical and legacy; fast and auto once codegen.plan_fast exists). A fast
  plan the planner refuses for a program is not a case."""
from __future__ import annotations

import importlib.util
import os
import shutil
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted(ROOT.glob("examples/*.py")) + sorted(ROOT.glob("tests/programs/valid/*.py"))

# The long corpora run whole at night (VERIFY_NIGHTLY=1; the GPU machine's
# tests/gpu_all.sh sets it) and as a fixed share in the default run, which must stay
# under 10 minutes on two cores (README, "Run the tests"): every example and every
# SAMPLE_EVERY-th test program (sorted by path, so the share is the same on every
# machine and changes only as programs are added).
NIGHTLY = os.environ.get("VERIFY_NIGHTLY") == "1"
SAMPLE_EVERY = 6


def sampled(paths: list[Path]) -> list[Path]:
    """paths whole at night; else the examples and every SAMPLE_EVERY-th other one."""
    if NIGHTLY:
        return list(paths)
    examples = [p for p in paths if p.parent.name == "examples"]
    rest = [p for p in paths if p.parent.name != "examples"]
    return examples + rest[::SAMPLE_EVERY]

# TileLang's own GEMV tilings (BLOCK_M, BLOCK_K, threads) of examples/gemv_pipelined.py:
# each needs more than 48 KB of shared memory in at least one plan.
TILINGS = [(64, 256, 256), (128, 128, 256), (32, 512, 256), (16, 1024, 256), (64, 512, 128)]
GEMV = ROOT / "examples" / "gemv_pipelined.py"


def tiling_source(block_m: int, block_k: int, threads: int, size: int = 4096) -> str:
    """examples/gemv_pipelined.py with M = K = size and its tile constants set."""
    import re
    values = {"M": size, "K": size, "BLOCK_M": block_m, "BLOCK_K": block_k,
              "THREADS": threads}
    text = GEMV.read_text()
    for name, value in values.items():
        text, n = re.subn(rf"^{name} = .*$", f"{name} = {value}", text, flags=re.M)
        assert n == 1, name
    return text


def nvcc() -> str | None:
    return shutil.which("nvcc")


requires_nvcc = pytest.mark.skipif(nvcc() is None, reason="nvcc is not on PATH")


@lru_cache(maxsize=1)
def gpu_problem() -> str | None:
    """Why CUDA cannot run here, or None when it can."""
    if importlib.util.find_spec("pycuda") is None:
        return "pycuda is not installed"
    from verify_reducer.codegen.runner import CudaUnavailable, _driver
    try:
        _driver()
    except CudaUnavailable as exc:
        return str(exc)
    return None


def planners() -> tuple[str, ...]:
    names = ["canonical", "legacy"]
    if importlib.util.find_spec("verify_reducer.codegen.plan_fast") is not None:
        names += ["fast", "auto"]
    return tuple(names)


def case_id(path: Path) -> str:
    return str(path.relative_to(ROOT).with_suffix("")).replace("/", ".")


def load(path: Path):
    from verify_reducer.spec.frontend import parse_file
    return parse_file(str(path)).func()


def plan(path: Path, planner: str, target: str | None = None):
    """The physical plan (for target: a spec.target name, default the default target),
    or pytest.skip when the planner refuses this program."""
    from verify_reducer.codegen.plan import plan_func
    from verify_reducer.spec.target import DEFAULT_TARGET
    func = load(path)
    target = target or DEFAULT_TARGET
    if planner == "fast":
        from verify_reducer.codegen.plan_fast import FastPlanRefused
        try:
            return plan_func(func, planner, target=target)
        except FastPlanRefused as refused:
            pytest.skip(f"the fast plan is refused: {refused}")
    return plan_func(func, planner, target=target)


def cuda_within_the_interpreters_bound(path: Path, planner: str,
                                       target: str | None = None) -> None:
    """Our CUDA under planner (planned for target: an older architecture's plan runs
    on the H200 as its lowering says, e.g. sm_80's mma.sync where sm_90 issues wgmma),
    on seed 0's inputs, lies within the logical interpreter's bound for every output
    (skipped without a GPU; a refused fast plan skips)."""
    import numpy as np
    from verify_reducer.codegen.runner import run_cuda
    from verify_reducer.interp.accept import within_bound
    from verify_reducer.interp.logical import run
    from verify_reducer.verify.oracle.inputs import prepare
    problem = gpu_problem()
    if problem is not None:
        pytest.skip(problem)
    physical = plan(path, planner, target)
    inputs = prepare(physical.func, seed=0)
    reference = run(physical.func, {k: v.copy() for k, v in inputs.items()})
    got = run_cuda(physical, {k: v.copy() for k, v in inputs.items()})
    for name, want in reference.outputs.items():
        ok = within_bound(np.asarray(got[name]).astype(want.dtype), want,
                          reference.bounds[name])
        assert ok.all(), f"{name}: {int((~ok).sum())} of {ok.size} elements differ"


def cases(programs: list[Path] | None = None) -> list:
    return [pytest.param(path, planner, id=f"{case_id(path)}-{planner}")
            for path in (PROGRAMS if programs is None else programs)
            for planner in planners()]


def tilelang_outputs(path: Path, func, inputs: dict):
    """Every tensor parameter after TileLang ran the program at path on inputs; skipped,
    with TileLang's own words, where TileLang is not installed or refuses the program
    (import, compile): a refusal is recorded, never a pass. A failure at run time is
    raised: that is a finding."""
    from verify_reducer.codegen import tilelang_backend
    from verify_reducer.codegen.tilelang_backend import TileLangFailed
    problem = tilelang_backend.unavailable_reason()
    if problem is not None:
        pytest.skip(problem)
    try:
        return tilelang_backend.run_tilelang(str(path), func, inputs)
    except TileLangFailed as failed:
        if failed.stage in ("import", "compile"):
            pytest.skip(f"TileLang refuses this program ({failed.stage}): "
                        f"{failed.detail[-300:]}")
        raise


def batch_unit(sources: list[str]) -> str:
    """One translation unit of many kernels: the runtime header once, then each kernel
    (named apart) in a namespace of its own, so file-scope tables of different kernels
    never clash (one nvcc call compiles a batch)."""
    from verify_reducer.codegen.cuda import INCLUDE, RUNTIME_HEADER
    parts = [RUNTIME_HEADER.read_text().replace("#pragma once\n", "")]
    for n, source in enumerate(sources):
        parts.append(f"namespace case{n} {{\n{source.replace(INCLUDE, '')}}}  "
                     f"// namespace case{n}\n")
    return "\n".join(parts)

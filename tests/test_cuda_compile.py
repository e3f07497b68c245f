"""Every program's generated CUDA, in every plan, compiles as it is with
`nvcc -arch=sm_90 -cubin -fmad=false` (the translation unit `emit --what cuda` prints:
the runtime header inlined). The compiles run two at a time, once per module, each
distinct text once; each case then reports its own result with nvcc's output."""
from __future__ import annotations

import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cuda_env import cases, nvcc, plan, requires_nvcc

pytestmark = [pytest.mark.nvcc, requires_nvcc]

CASES = cases()
COMMAND = ("-arch=sm_90", "-cubin", "-fmad=false")


def _compile(source: str, workdir: Path, stem: str) -> tuple[int, str]:
    unit = workdir / f"{stem}.cu"
    unit.write_text(source)
    done = subprocess.run([nvcc(), *COMMAND, "-o", str(workdir / f"{stem}.cubin"), str(unit)],
                          capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="module")
def compiled():
    """case id -> (exit status, nvcc output), or the exception rendering raised."""
    from codegen.cuda import render
    sources: dict[str, str] = {}
    results: dict[str, object] = {}
    for param in CASES:
        path, planner = param.values
        try:
            sources[param.id] = render(plan(path, planner)).translation_unit()
        except BaseException as exc:          # a skip or a rendering error, per case
            results[param.id] = exc
    unique = {src: n for n, src in enumerate(dict.fromkeys(sources.values()))}
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        # auto often renders exactly what fast or canonical does: compile each text once
        futures = {src: pool.submit(_compile, src, Path(tmp), f"unit{n}")
                   for src, n in unique.items()}
        results.update({cid: futures[src].result() for cid, src in sources.items()})
    return results


@pytest.mark.parametrize("path, planner", CASES)
def test_generated_cuda_compiles(compiled, request, path, planner):
    result = compiled[request.node.callspec.id]
    if isinstance(result, BaseException):
        raise result
    status, output = result
    assert status == 0, f"nvcc {' '.join(COMMAND)} failed on {path.name} ({planner}):\n{output}"

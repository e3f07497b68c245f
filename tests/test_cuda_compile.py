"""Every program's generated CUDA, in every plan, compiles with
`nvcc -arch=sm_90 -cubin -fmad=false` (`-arch=sm_90a` for a unit that issues wgmma:
codegen.cuda.compile_arch).

Planning (the fast plan's proofs) runs in two worker processes, a program each. nvcc
costs seconds per process whatever it compiles, so the kernels are compiled in a few
batches rather than one process each:
- each distinct kernel (a plan that renders exactly what another plan of the program
  renders, e.g. auto = fast, is compiled once) is rendered under a kernel name of its
  own (`render(plan, kernel_name=...)`) and wrapped in a namespace of its own; a batch
  is one translation unit: the runtime header once, then its kernels;
- a batch that fails is compiled again kernel by kernel, each as the translation unit
  `emit --what cuda` prints, so a failing case names its program and plan and shows
  nvcc's own errors for it;
- a handful of translation units are also compiled exactly as emitted (the minimal
  example in every plan, a warp-specialized kernel, a vectorized one): the proof that
  the emitted unit is self-contained.

The batches run ptxas verbose, and no kernel may have a local-memory frame other than
ptxas's own spills (unless its plan warns R506, registers over budget): registers
indexed at run time go through the runtime's select helpers (reducer_get/reducer_set),
since CUDA 13.0's ptxas miscompiles 16-bit stores to local memory (the
tests/programs/valid/gpu_*.py programs came out wrong on the H200 that way)."""
from __future__ import annotations

import multiprocessing
import re
import subprocess
import tempfile
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from cuda_env import PROGRAMS, ROOT, batch_unit, case_id, cases, nvcc, plan, planners, \
    requires_nvcc, sampled

pytestmark = [pytest.mark.nvcc, requires_nvcc]

CASES = cases(sampled(PROGRAMS))       # every program at night (cuda_env.NIGHTLY)
COMMAND = ("-arch=sm_90", "-cubin", "-fmad=false", "-Xptxas", "-v")   # sm_90a for wgmma
BATCHES = 4                  # two at a time on two cores; a failure re-runs only its batch
MINIMAL = ROOT / "examples" / "minimal_rfc.py"
ALONE = [(MINIMAL, planner) for planner in planners()] + [
    (ROOT / "examples" / "warp_group.py", "canonical"),          # named barriers
    (ROOT / "tests" / "programs" / "valid" / "gemv_shared_vector.py", "canonical"),  # float4
]


def _compile(source: str, workdir: Path, stem: str) -> tuple[int, str]:
    from verify_reducer.codegen.cuda import compile_arch
    unit = workdir / f"{stem}.cu"
    unit.write_text(source)
    arch = f"-arch={compile_arch('sm_90', source)}"      # a unit that issues wgmma: sm_90a
    done = subprocess.run([nvcc(), arch, *COMMAND[1:], "-o", str(workdir / f"{stem}.cubin"),
                           str(unit)],
                          capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


def _render_program(path: Path) -> list[tuple[str, str, str, str]]:
    """Every plan of one program, rendered: (case id, "ok" | "skip" | "error", the
    emitted translation unit or the reason, the kernel under a name of its own).
    Runs in a worker process: planning (the fast plan's proofs) is most of the time."""
    import traceback
    from verify_reducer.codegen.cuda import render
    out = []
    for planner in planners():
        cid = f"{case_id(path)}-{planner}"
        try:
            physical = plan(path, planner)
            unit = render(physical).translation_unit()
            named = render(physical, kernel_name=f"{_stem(cid)}_kernel").source
            out.append((cid, "ok", unit, named))
        except pytest.skip.Exception as skip:
            out.append((cid, "skip", str(skip), ""))
        except Exception:
            out.append((cid, "error", traceback.format_exc(), ""))
    return out


@pytest.fixture(scope="module")
def compiled():
    """case id -> (exit status, nvcc output, the kernel's ptxas figures or None, the
    file-scope tables the kernel declares and never reads, the barriers that count a partial
    warp), or ("skip" | "error", why,
    None, [], [])."""
    from verify_reducer.codegen.ptxas import parse_verbose
    programs = list(dict.fromkeys(param.values[0] for param in CASES))
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        rendered = [row for rows in pool.map(_render_program, programs) for row in rows]
    results: dict[str, object] = {}
    units: dict[str, str] = {}                  # case id -> its emitted translation unit
    named: dict[str, str] = {}
    for cid, status, text, kernel in rendered:
        if status == "ok":
            units[cid], named[cid] = text, kernel
        else:
            results[cid] = (status, text, None, [], [])
    first = {}                                  # each distinct text: its first case
    for cid, text in units.items():
        first.setdefault(text, cid)
    distinct = list(first.values())
    groups = [group for group in (distinct[b::BATCHES] for b in range(BATCHES)) if group]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        work = Path(tmp)
        batches = [pool.submit(_compile, batch_unit([named[c] for c in group]), work,
                               f"batch{b}") for b, group in enumerate(groups)]
        alone: dict[str, object] = {}
        for group, future in zip(groups, batches):
            status, output = future.result()
            figures = parse_verbose(output)
            for cid in group:
                if status == 0:
                    alone[cid] = (0, "", figures.get(f"{_stem(cid)}_kernel"))
                else:                           # which case broke: each on its own
                    alone[cid] = pool.submit(_compile, units[cid], work, _stem(cid))
        for cid, result in alone.items():
            if not isinstance(result, tuple):
                status, output = result.result()
                figures = list(parse_verbose(output).values())
                alone[cid] = (status, output, figures[0] if figures else None)
        results.update({cid: (*alone[first[text]], _unread_tables(text),
                               _partial_warp_barriers(text))
                        for cid, text in units.items()})
    return results


def _unread_tables(unit: str) -> list[str]:
    """The `__device__ const` tables unit declares and never names again (nvcc warns
    "declared but never referenced")."""
    tables = re.findall(r"__device__ const \w+ (\w+)\[", unit)
    return [t for t in tables if len(re.findall(rf"\b{t}\b", unit)) < 2]


def _partial_warp_barriers(unit: str) -> list[str]:
    """Named barriers whose count is not whole warps: `bar.sync id, 4` compiles, and is an
    illegal instruction on the GPU (a 4-thread block killed the GPU suite's context)."""
    return [m.group(0) for m in re.finditer(r"reducer_barrier\((\w+), (\d+)\)", unit)
            if int(m.group(2)) % 32]


def _stem(cid: str) -> str:
    return re.sub(r"\W", "_", cid)


@pytest.mark.parametrize("path, planner", CASES)
def test_generated_cuda_compiles(compiled, request, path, planner):
    status, output, figures, unread, partial_warps = compiled[request.node.callspec.id]
    if status == "skip":
        pytest.skip(output)
    assert status != "error", f"rendering {path.name} ({planner}) failed:\n{output}"
    assert status == 0, f"nvcc {' '.join(COMMAND)} failed on {path.name} ({planner}):\n{output}"
    assert not unread, f"{path.name} ({planner}) declares tables it never reads: {unread}"
    assert not partial_warps, f"{path.name} ({planner}) counts a partial warp: {partial_warps}"
    assert figures is not None, f"ptxas -v reported nothing for {path.name} ({planner})"
    # a frame that holds spills is ptxas's register allocation; one without spills is an
    # array indexed at run time (unless the plan itself warns R506)
    warned = figures.stack_bytes and any(d.code == "R506" for d in plan(path, planner).notes)
    assert figures.stack_bytes == 0 or figures.spills or warned, (
        f"{path.name} ({planner}) keeps {figures.stack_bytes} bytes in local memory "
        f"without spilling: a register array indexed at run time")


@pytest.fixture(scope="module")
def emitted_alone():
    """The ALONE programs' emitted translation units, each distinct one compiled as it
    is: case id -> (exit status, nvcc output), or the exception rendering raised."""
    from verify_reducer.codegen.cuda import render
    units: dict[str, object] = {}
    for path, planner in ALONE:
        cid = f"{case_id(path)}-{planner}"
        try:
            units[cid] = render(plan(path, planner)).translation_unit()
        except BaseException as exc:
            units[cid] = exc
    texts = {text: cid for cid, text in units.items() if isinstance(text, str)}
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        futures = {text: pool.submit(_compile, text, Path(tmp), _stem(cid))
                   for text, cid in texts.items()}
        return {cid: futures[text].result() if isinstance(text, str) else text
                for cid, text in units.items()}


@pytest.mark.parametrize("path, planner", ALONE,
                         ids=[f"{case_id(p)}-{planner}" for p, planner in ALONE])
def test_emitted_unit_compiles_alone(emitted_alone, path, planner):
    result = emitted_alone[f"{case_id(path)}-{planner}"]
    if isinstance(result, BaseException):
        raise result
    status, output = result
    assert status == 0, (f"the unit `emit --what cuda --plan {planner}` prints for "
                         f"{path.name} does not compile on its own:\n{output}")

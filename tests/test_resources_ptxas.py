"""ptxas agrees with the resource model (codegen.resources), and kernels over 48 KB of
shared memory compile.

Every example and every tests/programs/valid program, plus examples/gemv_pipelined.py at
TileLang's GEMV tilings (64x256, 128x128, 32x512, 16x1024 on 256 threads; 64x512 on 128
threads; M = K = 4096), in the canonical and the default (auto) plan, is compiled with
`nvcc -arch=sm_90 -cubin -fmad=false -Xptxas -v` (codegen.ptxas). ptxas's static shared
memory must equal the model's static bytes: the model's total for a static kernel, 0 for
a dynamic one (whose bytes are the launch's). Planning runs in two worker processes;
the kernels are compiled in a few batched translation units (namespaces keep their
file-scope tables apart), two at a time."""
from __future__ import annotations

import multiprocessing
import re
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

from cuda_env import GEMV, PROGRAMS, TILINGS, batch_unit, case_id, requires_nvcc, sampled, \
    tiling_source

pytestmark = [pytest.mark.nvcc, requires_nvcc]

PLANNERS = ("canonical", "auto")
BATCHES = 4


def _programs() -> list[tuple[str, str, str]]:
    """(case stem, path for messages, source)."""
    out = [(case_id(p), str(p), p.read_text()) for p in sampled(PROGRAMS)]
    out += [(f"gemv_{m}x{k}_{t}", f"{GEMV} at {m}x{k}, {t} threads", tiling_source(m, k, t))
            for m, k, t in TILINGS]
    return out


def _plan_and_render(program: tuple[str, str, str]) -> list[tuple[str, object, str, str]]:
    """Every plan of one program: (case id, its Resources, its kernel's source under a
    name of its own, that name). Runs in a worker process."""
    from verify_reducer.spec.frontend import parse_source
    from verify_reducer.codegen.cuda import render
    from verify_reducer.codegen.plan import plan_func
    stem, path, source = program
    func = parse_source(source, path).func()
    out = []
    for planner in PLANNERS:
        plan = plan_func(func, planner)
        kernel = re.sub(r"\W", "_", f"{stem}_{planner}")
        source = render(plan, kernel_name=kernel)
        # the launch's bytes: the plan's dynamic arrays, padded where it caps occupancy
        assert source.dynamic_shared_bytes == plan.resources.launch_shared_bytes
        assert source.dynamic_shared_bytes >= plan.resources.dynamic_shared_bytes
        out.append((f"{stem}-{planner}", plan.resources, source.source, kernel))
    return out


@pytest.fixture(scope="module")
def measured():
    """case id -> (Resources, PtxasFigures)."""
    from verify_reducer.codegen.ptxas import compile_figures
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        rows = [row for rows in pool.map(_plan_and_render, _programs()) for row in rows]
    groups = [rows[b::BATCHES] for b in range(BATCHES)]
    with ThreadPoolExecutor(2) as pool:
        batches = list(pool.map(lambda g: compile_figures(batch_unit([r[2] for r in g])), groups))
    return {cid: (resources, figures[kernel])
            for group, figures in zip(groups, batches)
            for cid, resources, _, kernel in group}


def _ids() -> list[str]:
    return [f"{stem}-{planner}" for stem, _, _ in _programs() for planner in PLANNERS]


@pytest.mark.parametrize("cid", _ids())
def test_ptxas_shared_memory_equals_the_model(measured, cid):
    """The model is what ptxas allocates; ptxas may trim the unread tail of a static
    workspace (a 32-thread segmented finalize stores word 0 of 4 only), never more:
    the model is then above it, which is the safe side of every limit."""
    resources, figures = measured[cid]
    model = resources.static_shared_bytes
    trimmed = resources.shared and resources.shared[-1].what == "reducer workspace" and \
        model - resources.shared[-1].bytes <= figures.shared_bytes < model
    assert figures.shared_bytes == model or trimmed, (
        f"{cid}: ptxas reports {figures.shared_bytes} bytes of static shared memory, the "
        f"model {resources.static_shared_bytes} (dynamic {resources.dynamic_shared_bytes}): "
        + ", ".join(f"{a.name} {a.bytes}@{a.offset}" for a in resources.shared))


@pytest.mark.parametrize("tiling", TILINGS, ids=[f"{m}x{k}_{t}" for m, k, t in TILINGS])
def test_gemv_tilings_fit_shared_memory(measured, tiling):
    """The tilings that failed with "uses too much shared data" compile, every plan:
    with the segmented finalize their workspace is (lane groups x slots) words, so the
    A tile and the workspace fit the 48 KB of static shared memory; a kernel over it
    would go to dynamic shared memory (ptxas then reports none static)."""
    m, k, t = tiling
    for planner in PLANNERS:
        resources, figures = measured[f"gemv_{m}x{k}_{t}-{planner}"]
        assert resources.dynamic == (resources.shared_bytes > 48 * 1024)
        assert figures.shared_bytes == resources.static_shared_bytes
        assert resources.shared[0].name == "A_shared" and resources.shared[0].offset == 0


def test_every_spill_is_reported_in_the_plan_text(measured):
    """A kernel ptxas spills registers of is correct but slower; the plan text
    (`emit --what plan --ptxas`) must say so, with ptxas's byte counts. Today the fast
    plans of the largest GEMV tilings spill a few words (their partials cover every
    output of the block; the storage-in-the-loop-layout change shrinks them)."""
    from verify_reducer.codegen.ptxas import figures_text
    for cid, (_, figures) in measured.items():
        text = "\n".join(figures_text(figures))
        if figures.spills:
            assert (f"spills registers: {figures.spill_stores} bytes of spill stores, "
                    f"{figures.spill_loads} bytes of spill loads") in text, cid
        else:
            assert "spill" not in text, cid

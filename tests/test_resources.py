"""The resource model on the plan (codegen.resources), the target table (spec.target),
R506, the dynamic shared memory the renderer declares and the runner launches with, the
resources in the plan's text and JSON, and the ptxas report parser (codegen.ptxas)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from verify_reducer.spec.frontend import parse_file
from verify_reducer.spec.target import TARGETS, target
from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.plan import plan_func
from verify_reducer.codegen.plan_text import format_plan, plan_json
from verify_reducer.codegen.ptxas import PtxasFigures, figures_text, parse_verbose
from verify_reducer.codegen.resources import ALIGN, kib
from verify_reducer.codegen.runner import launch_arguments
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent
VALID = ROOT / "tests" / "programs" / "valid"
DYNAMIC = VALID / "gemv_dynamic_shared.py"
WARNING = VALID / "register_budget_warning.py"
MINIMAL = ROOT / "examples" / "minimal_rfc.py"


def _plan(path: Path, planner: str = "canonical"):
    return plan_func(parse_file(str(path)).func(), planner)


# ----------------------------------------------------------------------------- target

def test_sm90_limits():
    sm90 = target("sm_90")
    assert (sm90.static_shared_bytes, sm90.dynamic_shared_bytes) == (49152, 232448)
    assert sm90.threads_per_block == 1024 and sm90.grid == (2 ** 31 - 1, 65535, 65535)
    assert sm90.register_budget(128) == 255 and sm90.register_budget(1024) == 64
    with pytest.raises(ValueError, match="sm_90"):
        target("sm_00")
    assert set(TARGETS) == {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100"}   # tests/test_arch.py


# ----------------------------------------------------------------------------- model

def test_static_kernel_arrays_are_aligned_in_program_order():
    # A_shared and x_shared are staged by a 2-stage pipeline: two copies each
    res = _plan(VALID / "gemv_shared_vector.py").resources
    assert not res.dynamic and res.static_shared_bytes == res.shared_bytes == 336
    names = [(a.name, a.what, a.bytes, a.offset) for a in res.shared]
    assert names == [("A_shared", "shared buffer", 256, 0),
                     ("x_shared", "shared buffer", 64, 256),
                     ("acc workspace", "reducer workspace", 16, 320)]
    assert all(a.offset % ALIGN == 0 for a in res.shared)
    assert res.shared_bytes % ALIGN == 0


def test_reduce_rows_are_shared_arrays():
    res = _plan(VALID / "reduce_ops_no_reducer.py").resources
    assert res.shared and all(a.what == "reduce rows" for a in res.shared)


def test_dynamic_kernel_over_48_kb():
    plan = _plan(DYNAMIC)
    res = plan.resources
    # the x tile staged through shared memory by the pipeline: 2 stages of 512 fp16
    assert res.dynamic and res.shared_bytes == 133632
    assert (res.static_shared_bytes, res.dynamic_shared_bytes) == (0, 133632)
    assert [(a.name, a.offset, a.bytes) for a in res.shared] == [
        ("A_shared", 0, 131072), ("acc workspace", 131072, 512),
        ("x_frag_stage", 131584, 2048)]
    assert res.threads == 256 and res.grid == (1, 1, 1)


def test_registers_count_partials_fragments_and_seeds():
    res = _plan(WARNING, "auto").resources
    words = {(r.name, r.what): r.words for r in res.registers}
    assert words[("A_frag", "fragment")] == 256          # 512 fp16 slots, packed
    assert words[("acc", "reducer partials")] == 64       # two rows per thread: the loop layout
    assert res.register_words > res.register_budget == 255
    seeded = _plan(ROOT / "examples" / "seeded_init.py").resources
    assert any(r.what == "reducer seed" for r in seeded.registers)


# ----------------------------------------------------------------------------- R506

def test_r506_warning_does_not_reject():
    notes = _plan(WARNING, "auto").notes
    assert [(d.code, d.severity) for d in notes] == [("R506", "warning")]
    assert "about 349 registers per thread" in notes[0].message
    report = pipeline.check(str(WARNING))
    assert report.exit_code == pipeline.EXIT_OK
    assert [d.code for d in report.diagnostics] == ["R506"]
    assert report.diagnostics[0].severity == "warning"


def test_r506_errors_name_the_numbers():
    plan = _plan(ROOT / "tests" / "programs" / "resources" / "r506_shared_too_large.py")
    [err] = [d for d in plan.notes if d.is_error]
    assert err.message.startswith("shared memory 258 KB (A_shared 256 KB, acc workspace 2 KB)")
    assert "227 KB" in err.message and "sm_90" in err.message
    assert err.span.line == 24


@pytest.mark.parametrize("command", [["check"], ["run", "--backend", "sim"],
                                     ["emit", "--what", "plan"], ["emit", "--what", "cuda"]])
def test_r506_exits_1_from_every_command(capsys, command):
    program = str(ROOT / "tests" / "programs" / "resources" / "r506_too_many_threads.py")
    code = main([command[0], program, *command[1:]])
    _, err = capsys.readouterr()
    assert code == 1
    assert "error[R506]: threads=2048 exceeds 1024 threads per block on sm_90" in err


def test_runner_refuses_a_plan_over_the_limits():
    from verify_reducer.codegen.runner import run_cuda
    from verify_reducer.spec.diagnostics import DiagnosticError
    plan = _plan(ROOT / "tests" / "programs" / "resources" / "r506_shared_too_large.py")
    with pytest.raises(DiagnosticError, match="R506"):
        run_cuda(plan, {})


# ----------------------------------------------------------------------------- CUDA

def test_dynamic_kernel_declares_one_extern_buffer():
    source = render(_plan(DYNAMIC))
    assert source.dynamic_shared_bytes == 133632
    text = source.source
    assert "extern __shared__ __align__(16) unsigned char smem[];" in text
    assert "half* const A_shared = reinterpret_cast<half*>(smem + 0);" in text
    assert "float* const acc_workspace = reinterpret_cast<float*>(smem + 131072);" in text
    assert "__shared__ __align__(16) half" not in text


def test_static_kernel_keeps_static_arrays():
    source = render(_plan(VALID / "gemv_shared_vector.py"))
    assert source.dynamic_shared_bytes == 0
    assert "extern __shared__" not in source.source
    assert "__shared__ __align__(16) float acc_workspace[4];" in source.source


class _Kernel:
    def __init__(self):
        self.attributes = {}

    def set_attribute(self, attribute, value):
        self.attributes[attribute] = value


_DRIVER = SimpleNamespace(function_attribute=SimpleNamespace(
    MAX_DYNAMIC_SHARED_SIZE_BYTES="MAX_DYNAMIC_SHARED_SIZE_BYTES"))


def test_runner_launches_dynamic_kernels_with_their_bytes():
    source = render(_plan(DYNAMIC))
    kernel = _Kernel()
    launch = launch_arguments(source, kernel, _DRIVER)
    assert launch == {"grid": (1, 1, 1), "block": (256, 1, 1), "shared": 133632}
    assert kernel.attributes == {"MAX_DYNAMIC_SHARED_SIZE_BYTES": 133632}


def test_runner_launches_static_kernels_without_the_attribute():
    kernel = _Kernel()
    launch = launch_arguments(render(_plan(MINIMAL)), kernel, _DRIVER)
    assert launch["shared"] == 0 and kernel.attributes == {}


# ----------------------------------------------------------------------------- report

def test_plan_text_has_a_resources_block():
    text = format_plan(_plan(DYNAMIC))
    assert "resources on sm_90: 256 threads per block (at most 1024), grid 1×1×1" in text
    assert "shared memory: 133632 bytes (dynamic" in text
    assert "A_shared: shared buffer, 65536 × float16, 131072 bytes at offset 0" in text
    assert "registers: about" in text
    figures = PtxasFigures("main_kernel", 40, 0, 16, 8, 4)
    with_ptxas = format_plan(_plan(DYNAMIC), figures)
    assert "ptxas (sm_90): 40 registers, 0 bytes static shared memory, 16 bytes stack" \
        in with_ptxas
    assert "warning: ptxas spills registers: 8 bytes of spill stores, 4 bytes" in with_ptxas


def test_plan_without_reducers_still_reports_resources():
    text = format_plan(_plan(VALID / "reduce_ops_no_reducer.py"))
    assert "(no reducers" in text and "resources on sm_90" in text


def test_plan_json_and_check_json_carry_resources(capsys):
    doc = plan_json(_plan(DYNAMIC))["resources"]
    assert doc["dynamic_shared_bytes"] == 133632 and doc["static_shared_bytes"] == 0
    assert doc["shared"][1] == {"name": "acc workspace", "what": "reducer workspace",
                                "dtype": "float32", "elements": 128, "bytes": 512,
                                "offset": 131072}
    assert doc["limits"]["dynamic_shared_bytes"] == 232448
    assert main(["check", str(MINIMAL), "--json"]) == 0
    check = json.loads(capsys.readouterr().out)
    assert check["resources"]["threads"] == 128
    assert check["resources"]["register_budget"] == 255


def test_kib():
    assert (kib(640), kib(2048), kib(295424)) == ("640 bytes", "2 KB", "288.5 KB")


# ----------------------------------------------------------------------------- ptxas

PTXAS_OUTPUT = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'dyn_kernel' for 'sm_90'
ptxas info    : Function properties for dyn_kernel
    1016 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 103 registers, used 2 barriers, 1016 bytes cumulative stack size
ptxas info    : Compile time = 140.000 ms
ptxas info    : Compiling entry function 'main_kernel' for 'sm_90'
ptxas info    : Function properties for main_kernel
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 102 registers, used 2 barriers, 65536 bytes smem
"""


def test_parse_ptxas_verbose():
    figures = parse_verbose(PTXAS_OUTPUT)
    assert figures["main_kernel"] == PtxasFigures("main_kernel", 102, 65536, 0, 0, 0)
    dyn = figures["dyn_kernel"]
    assert dyn == PtxasFigures("dyn_kernel", 103, 0, 1016, 8, 12) and dyn.spills
    assert figures_text(figures["main_kernel"]) == [
        "  ptxas (sm_90): 102 registers, 65536 bytes static shared memory, 0 bytes stack frame"]


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_emit_plan_ptxas(capsys):
    assert main(["emit", str(WARNING), "--what", "plan", "--ptxas"]) == 0
    out = capsys.readouterr().out
    assert "ptxas (sm_90): " in out and "bytes stack frame" in out
    assert "warning[R506]: about 349 registers" in out
    assert main(["emit", str(DYNAMIC), "--what", "plan", "--ptxas", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["plan"]["ptxas"]["shared_bytes"] == 0


def test_emit_plan_ptxas_without_nvcc_is_a_usage_error(capsys, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main(["emit", str(MINIMAL), "--what", "plan", "--ptxas"]) == 2
    assert "nvcc is not on PATH" in capsys.readouterr().err

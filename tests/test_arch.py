"""Targets (issue 29; docs/design.md §27): each architecture's limits and features, the
decisions that read them, and `--arch` / `arch =` on the command line.

- the table: every figure of the CUDA Programming Guide's table the plan reads, pinned;
  the launch limits the frontend checks are the same on every target;
- R506 at each target's own boundary: shared memory that fits one target is refused on
  another, with that target's figure in the message; the occupancy rule reads the
  target's threads per SM;
- vector atomics: on sm_90 and sm_100 a T.atomic_addxN of float32 (and of four 16-bit
  lanes) is one instruction; on sm_80/86/89 it is one atomicAdd per lane, in the plan
  (AtomicIssue.per_lane), so the simulator checks what the GPU runs: still exact, a
  planted double issue still R503, and no alignment asked of element atomics;
- fp8 below sm_89: cuda_fp8.hpp converts in software; that code (the header's host path,
  the one the device compiles below 8.9) gives the interpreter's values (nvcc needed);
- the command line: --arch, `arch =` in [tool.verify-reducer], an unknown architecture,
  the cache key; the CUDA runner's device detection and its refusal of a plan the device
  cannot run (a stand-in driver; the GPU tests below run the real one).

The compile of every program for every target is tests/test_arch_ptxas.py."""
from __future__ import annotations

import dataclasses
import shutil
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen.cuda import render
from verify_reducer.codegen.plan import plan_func
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.target import TARGETS, target, target_for_capability
from verify_reducer.verify.cli.commands import main

from cuda_env import gpu_problem, requires_nvcc

ROOT = Path(__file__).resolve().parent.parent
LANES = ROOT / "tests" / "programs" / "valid" / "atomic_addx2_addx4_lanes.py"


def _shared_program(elements: int) -> str:
    """A kernel whose one shared buffer is `elements` float32 and nothing else: its
    block's shared memory is exactly 4 × elements bytes."""
    return textwrap.dedent(f"""\
        import tilelang.language as T

        N = {elements}


        @T.prim_func
        def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared((N,), T.float32)
                T.copy(A[0], S)
                T.copy(S, B[0])
        """)


def _plan(source: str, arch: str, planner: str = "auto"):
    return plan_func(parse_source(source, "<test>").func(), planner, target=arch)


def _r506(plan) -> list:
    return [d for d in plan.notes if d.code == "R506" and d.is_error]


# ----------------------------------------------------------------------------- the table

@pytest.mark.parametrize("arch, per_sm, per_block, threads, blocks", [
    ("sm_80", 164, 163, 2048, 32), ("sm_86", 100, 99, 1536, 16),
    ("sm_89", 100, 99, 1536, 24), ("sm_90", 228, 227, 2048, 32),
    ("sm_100", 228, 227, 2048, 32)])
def test_each_target_has_the_programming_guides_figures(arch, per_sm, per_block, threads,
                                                        blocks):
    t = target(arch)
    assert (t.shared_per_sm, t.dynamic_shared_bytes) == (per_sm * 1024, per_block * 1024)
    assert (t.threads_per_sm, t.blocks_per_sm, t.shared_reserved) == (threads, blocks, 1024)
    assert t.registers_per_sm == t.registers_per_block == 65536
    assert target_for_capability(*t.compute_capability) == arch


@pytest.mark.parametrize("arch, async_copy, vector, fp8, fp8_mma, wgmma", [
    ("sm_80", True, False, False, False, False), ("sm_86", True, False, False, False, False),
    ("sm_89", True, False, True, True, False), ("sm_90", True, True, True, True, True),
    ("sm_100", True, True, True, True, False)])
def test_each_target_has_its_features(arch, async_copy, vector, fp8, fp8_mma, wgmma):
    t = target(arch)
    assert (t.async_copy, t.vector_float_atomics, t.fp8_conversions, t.fp8_mma,
            t.wgmma) == (async_copy, vector, fp8, fp8_mma, wgmma)


def test_the_json_schema_lists_every_field_of_a_target():
    """The plan's `limits` object is Target.to_json(); its schema (additionalProperties
    false) must name each field, a new feature included."""
    import json
    schema = json.loads((ROOT / "verify_reducer" / "schemas" / "defs.schema.json")
                        .read_text())["$defs"]["limits"]
    fields = set(target("sm_90").to_json())
    assert set(schema["properties"]) == set(schema["required"]) == fields


def test_the_launch_limits_the_frontend_checks_are_every_targets():
    """spec.limits checks threads per block and grid extents against the default
    target before any target is chosen: right only while every target has the same."""
    from verify_reducer.spec import limits
    for t in TARGETS.values():
        assert (t.threads_per_block, t.grid, t.static_shared_bytes) == \
            (limits.MAX_THREADS_PER_BLOCK, limits.MAX_GRID, 48 * 1024)


def test_an_unknown_target_or_capability_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown target architecture 'sm_75'; known: "
                                         "sm_80, sm_86, sm_89, sm_90, sm_100"):
        target("sm_75")
    with pytest.raises(ValueError, match="compute capability 12.0"):
        target_for_capability(12, 0)


# ----------------------------------------------------------------------------- limits

@pytest.mark.parametrize("arch", list(TARGETS))
def test_r506_at_each_targets_own_boundary(arch):
    """The most shared memory a block may have on arch fits; 16 bytes more is R506,
    naming arch's figure."""
    limit = target(arch).dynamic_shared_bytes
    fits = _plan(_shared_program(limit // 4), arch)
    assert fits.resources.shared_bytes == limit and not _r506(fits)
    (over,) = _r506(_plan(_shared_program(limit // 4 + 4), arch))
    assert f"exceeds the {limit // 1024} KB a block can have on {arch}" in over.message


def test_shared_memory_that_fits_sm90_is_r506_on_sm86_and_sm89_only():
    source = _shared_program(128 * 1024 // 4)                 # 128 KB
    refused = {arch for arch in TARGETS if _r506(_plan(source, arch))}
    assert refused == {"sm_86", "sm_89"}


def test_occupancy_reads_the_targets_threads_per_sm():
    """512-thread blocks: 4 fit an sm_90 SM's 2048 threads, 3 an sm_86 SM's 1536."""
    source = _shared_program(1024).replace("threads=128", "threads=512")
    assert _plan(source, "sm_90").resources.occupancy.resident == 4
    assert _plan(source, "sm_86").resources.occupancy.resident == 3


# ----------------------------------------------------------------------------- atomics

def _issues(plan):
    from verify_reducer.codegen.lower.atomics import issues
    return {stmt.buffer.name: issue for stmt, issue in issues(plan).items()}


def test_vector_atomics_are_one_instruction_on_sm90_and_sm100():
    for arch in ("sm_90", "sm_100"):
        issues = _issues(_plan(LANES.read_text(), arch))
        assert (issues["F2"].vector, issues["F2"].operand_type) == (2, "float2")
        assert not any(i.per_lane for i in issues.values())
        text = render(_plan(LANES.read_text(), arch)).source
        assert "reinterpret_cast<float2*>" in text and "reinterpret_cast<float4*>" in text


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89"])
def test_vector_float_atomics_fall_back_to_one_atomic_per_lane(arch):
    plan = _plan(LANES.read_text(), arch)
    issues = _issues(plan)
    for name, issue in issues.items():
        packed16 = issue.stmt.buffer.dtype.bits == 16 and issue.stmt.vector == 2
        if packed16:                 # half2 / __nv_bfloat162: every target has them
            assert issue.vector == 2 and issue.per_lane is None, name
        else:
            assert (issue.vector, issue.function, issue.lane_var) == (1, "atomicAdd", None)
            assert issue.per_lane == (f"{arch} has no {issue.stmt.vector}-lane atomic add "
                                      f"of {issue.stmt.buffer.dtype}: one atomicAdd per "
                                      f"lane"), name
    text = render(plan).source
    for vector in ("float2*", "float4*", "atom.global.add.noftz.v4"):
        assert vector not in text
    assert f"T.atomic_addx2 into F2[...]: {arch} has no 2-lane atomic add" in text
    assert "atomicAdd(&F2[" in text


def test_the_per_lane_fallback_is_simulated_exactly():
    from verify_reducer.verify.oracle import pipeline
    report = pipeline.check(str(LANES), target="sm_80")
    assert report.exit_code == 0 and report.violations == []
    assert {plan.resources.target for plan in report.plans.values()} == {"sm_80"}


def _planted(monkeypatch, **change):
    from verify_reducer.interp import sim_atomics
    real = sim_atomics.issue_of
    monkeypatch.setattr(sim_atomics, "issue_of",
                        lambda plan, stmt: dataclasses.replace(real(plan, stmt), **change))


def test_a_planted_double_issue_of_a_per_lane_atomic_is_r503(monkeypatch):
    """The fallback's lanes go through the ordinary atomic accounting: every replica
    issuing (the guard dropped) is caught on the CPU."""
    from verify_reducer.interp.simulate import simulate
    from verify_reducer.verify.oracle.inputs import prepare
    plan = _plan(LANES.read_text(), "sm_80")
    _planted(monkeypatch, guard_replica=None)
    found = [d for d in simulate(plan, prepare(plan.func, seed=0)).violations
             if d.code == "R503"]
    assert found and "applied 4 times" in found[0].message


def test_element_atomics_ask_no_alignment_where_the_vector_one_does():
    """A float32 pair at odd offsets: the float2 instruction faults (R505 on sm_90);
    sm_80's two atomicAdds are aligned as any float is."""
    from verify_reducer.interp.simulate import simulate
    from verify_reducer.verify.oracle.inputs import prepare
    source = textwrap.dedent("""\
        import tilelang.language as T


        @T.prim_func
        def main(X: T.Tensor((8, 32), T.float32), Out: T.Tensor((32,), T.float32)):
            with T.Kernel(8, threads=128) as bx:
                for j in T.Parallel(15):
                    T.atomic_addx2(Out[j * 2 + 1], X[bx, j * 2 + 1])
        """)
    codes = {}
    for arch in ("sm_90", "sm_80"):
        plan = _plan(source, arch, "canonical")
        codes[arch] = {d.code for d in simulate(plan, prepare(plan.func, seed=0)).violations}
    assert codes == {"sm_90": {"R505"}, "sm_80": set()}


# ----------------------------------------------------------------------------- float8

@pytest.mark.nvcc
@requires_nvcc
@pytest.mark.skipif(shutil.which("g++") is None, reason="nvcc's host compiler is missing")
def test_fp8_software_conversions_give_the_interpreters_values(tmp_path):
    """Below sm_89 cuda_fp8.hpp converts in software: the code of its `#else` branch,
    the same for the host and for a device under __CUDA_ARCH__ 890. Compiled for the
    host, it converts every float8 value, every midpoint between neighbours and the
    floats next to it, the saturation edge, ±0, ±inf, NaN and 400,000 random floats as
    DType.quantize does (round to nearest even, saturating, NaN kept), and widens all
    256 bytes exactly."""
    from verify_reducer.spec.dtypes import DTYPES, float8_from_bits
    program = tmp_path / "fp8.cu"
    program.write_text(textwrap.dedent("""\
        #include <cuda_fp8.h>
        #include <cstdio>
        int main(int, char** argv) {
          FILE* in = fopen(argv[1], "rb");
          FILE* out = fopen(argv[2], "wb");
          float x;
          while (fread(&x, 4, 1, in) == 1) {
            unsigned char b[2] = {__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3),
                                  __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2)};
            fwrite(b, 1, 2, out);
          }
          for (int v = 0; v < 256; ++v) {
            __nv_fp8_e4m3 a; a.__x = (unsigned char)v;
            __nv_fp8_e5m2 e; e.__x = (unsigned char)v;
            float f[2] = {static_cast<float>(a), static_cast<float>(e)};
            fwrite(f, 4, 2, out);
          }
          fclose(in);
          fclose(out);
          return 0;
        }
        """))
    binary = tmp_path / "fp8"
    subprocess.run([shutil.which("nvcc"), "-o", str(binary), str(program)], check=True,
                   capture_output=True, timeout=300)
    names = ("float8_e4m3fn", "float8_e5m2")
    x = _fp8_probes([DTYPES[n] for n in names])
    x.tofile(tmp_path / "in.bin")
    subprocess.run([str(binary), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")],
                   check=True, timeout=60)
    raw = np.fromfile(tmp_path / "out.bin", np.uint8)
    narrowed = raw[:2 * x.size].reshape(-1, 2)
    widened = raw[2 * x.size:].view(np.float32).reshape(256, 2)
    for column, name in enumerate(names):
        dtype = DTYPES[name]
        want, got = dtype.quantize(x), float8_from_bits(narrowed[:, column], dtype)
        same = (got == want) & (np.signbit(got) == np.signbit(want)) | \
            (np.isnan(got) & np.isnan(want))
        assert same.all(), (name, x[~same][:4], got[~same][:4], want[~same][:4])
        exact = float8_from_bits(np.arange(256, dtype=np.uint8), dtype)
        assert ((widened[:, column] == exact) | np.isnan(exact)).all()
        assert (np.isnan(widened[:, column]) == np.isnan(exact)).all()


def _fp8_probes(dtypes) -> np.ndarray:
    from verify_reducer.spec.dtypes import float8_from_bits
    up, down = np.float32(np.inf), np.float32(-np.inf)
    parts = [np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)]
    for dtype in dtypes:
        grid = float8_from_bits(np.arange(256, dtype=np.uint8), dtype)
        grid = np.unique(grid[np.isfinite(grid)])
        mids = ((grid[1:].astype(np.float64) + grid[:-1]) / 2).astype(np.float32)
        top = np.float32(dtype.finite_max)
        edge = np.array([top, top * 1.0625, top * 1.125, top * 2, 3e38], np.float32)
        for values in (grid, mids, edge):
            values = np.concatenate([values, -values])
            parts += [values, np.nextafter(values, up), np.nextafter(values, down)]
    rng = np.random.default_rng(0)
    parts.append(rng.integers(0, 2 ** 32, 200_000, dtype=np.uint64).astype(np.uint32)
                 .view(np.float32))
    parts.append((rng.standard_normal(200_000) * 100).astype(np.float32))
    return np.concatenate(parts).astype(np.float32)


# ----------------------------------------------------------------------------- the CLI

def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def program_128k(tmp_path) -> str:
    path = tmp_path / "shared_128k.py"
    path.write_text(_shared_program(128 * 1024 // 4))
    return str(path)


def test_check_arch_plans_for_that_target(capsys, program_128k):
    code, out, _ = _cli(capsys, "check", "--no-cache", "--json", program_128k)
    assert code == 0
    code, out, _ = _cli(capsys, "check", "--no-cache", "--arch", "sm_86", program_128k)
    assert code == 1 and "error[R506]" in out + _ and "99 KB a block can have on sm_86" \
        in out + _


def test_emit_plan_arch_names_the_target(capsys):
    code, out, _ = _cli(capsys, "emit", str(LANES), "--what", "plan", "--arch", "sm_89",
                        "--no-verify")
    assert code == 0 and "resources on sm_89" in out
    code, out, _ = _cli(capsys, "emit", str(LANES), "--what", "cuda", "--arch", "sm_80",
                        "--no-verify")
    assert code == 0 and "float4*" not in out and "atomicAdd(&F4[" in out


def test_run_sim_arch(capsys):
    code, out, _ = _cli(capsys, "run", str(LANES), "--backend", "sim", "--arch", "sm_80")
    assert code == 0


@pytest.mark.parametrize("command", ["check", "run", "emit"])
def test_an_unknown_arch_is_a_usage_error_naming_the_known_ones(capsys, command):
    with pytest.raises(SystemExit) as exc:
        main([command, str(LANES), "--arch", "sm_75"])
    _, err = capsys.readouterr()
    assert exc.value.code == 2
    assert "unknown architecture 'sm_75'; known: sm_80, sm_86, sm_89, sm_90, sm_100" in err


def test_the_configuration_chooses_the_arch_and_the_flag_wins(capsys, monkeypatch, tmp_path,
                                                             program_128k):
    (tmp_path / "pyproject.toml").write_text('[tool.verify-reducer]\narch = "sm_86"\n')
    monkeypatch.chdir(tmp_path)
    code, out, err = _cli(capsys, "check", "--no-cache", program_128k)
    assert code == 1 and "on sm_86" in out + err
    code, _, _ = _cli(capsys, "check", "--no-cache", "--arch", "sm_90", program_128k)
    assert code == 0


def test_an_unknown_arch_in_the_configuration_is_a_usage_error(capsys, monkeypatch,
                                                               tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.verify-reducer]\narch = "sm_70"\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(capsys, "check", str(LANES))
    assert code == 2 and "[tool.verify-reducer] arch: unknown architecture 'sm_70'" in err


def test_the_arch_is_part_of_the_cache_key(capsys, monkeypatch, tmp_path, program_128k):
    monkeypatch.delenv("VERIFY_REDUCER_NO_CACHE", raising=False)   # conftest's
    monkeypatch.setenv("VERIFY_REDUCER_CACHE_DIR", str(tmp_path / "cache"))
    _cli(capsys, "check", "-q", program_128k)
    assert _cli(capsys, "check", "-q", program_128k)[1].endswith("(cached)\n")
    code, out, _ = _cli(capsys, "check", "-q", "--arch", "sm_86", program_128k)
    assert code == 1 and "cached" not in out


# ----------------------------------------------------------------------------- the runner

class _Driver:
    """pycuda.driver as far as the runner asks it the device's compute capability."""
    def __init__(self, capability):
        device = type("Device", (), {"compute_capability": lambda self: capability})()
        self.Context = type("Context", (), {"get_device": staticmethod(lambda: device)})


def test_the_runner_refuses_a_plan_the_device_cannot_run():
    from verify_reducer.codegen import runner
    plan = _plan(LANES.read_text(), "sm_90")
    with pytest.raises(runner.CudaUnavailable,
                       match="the plan is for sm_90 and the device is sm_80, which lacks "
                             "vector_float_atomics, fp8_mma, 232448 bytes of shared "
                             "memory per block; plan for it"):
        runner._refuse_other_device(plan, _Driver((8, 0)))
    runner._refuse_other_device(_plan(LANES.read_text(), "sm_80"), _Driver((9, 0)))
    runner._refuse_other_device(plan, _Driver((10, 0)))


def test_run_cuda_without_arch_plans_for_the_device(capsys, monkeypatch):
    """No --arch: the plan is the device's (an A100 here, a stand-in run_cuda keeping
    the plan it was given)."""
    from verify_reducer.interp.logical import run
    from verify_reducer.verify.oracle import pipeline
    planned = []

    def stand_in(plan, inputs):
        planned.append(plan.resources.target)
        return {k: np.array(v, copy=True) for k, v in run(plan.func, inputs).outputs.items()}
    monkeypatch.setattr(pipeline, "run_cuda", stand_in)
    monkeypatch.setattr(pipeline, "device_target", lambda: "sm_80")
    assert _cli(capsys, "run", str(LANES), "--backend", "cuda")[0] == 0
    assert _cli(capsys, "run", str(LANES), "--backend", "cuda", "--arch", "sm_89")[0] == 0
    assert planned == ["sm_80", "sm_89"]


def test_ptxas_says_which_architecture_it_compiled_for():
    from verify_reducer.codegen.ptxas import figures_text, parse_verbose
    (figures,) = parse_verbose(
        "ptxas info    : Compiling entry function 'k' for 'sm_86'\n"
        "ptxas info    : Used 12 registers, used 0 barriers, 256 bytes smem\n").values()
    assert figures.arch == "sm_86"
    assert figures_text(figures)[0].startswith("  ptxas (sm_86): 12 registers")


# ----------------------------------------------------------------------------- the GPU

@pytest.mark.gpu
@pytest.mark.skipif(gpu_problem() is not None, reason=str(gpu_problem()))
def test_gpu_device_target_is_in_the_table():
    from verify_reducer.codegen.runner import device_target
    assert device_target() in TARGETS


@pytest.mark.gpu
@pytest.mark.skipif(gpu_problem() is not None, reason=str(gpu_problem()))
@pytest.mark.parametrize("arch", ["sm_80", "sm_89"])
def test_gpu_per_lane_atomics_of_an_older_target_run_and_match(capsys, arch):
    """The sm_80/sm_89 lowering (one atomicAdd per lane) compiled for the device and
    run: its outputs match the interpreter (the simulator's verdict, on the GPU)."""
    code, out, err = _cli(capsys, "run", str(LANES), "--backend", "cuda", "--arch", arch)
    assert code == 0, out + err

"""benchmarks/gemm_same_source.py (and benchmarks/same_source.py's pieces it uses)
without a GPU: the dry run parses, plans, renders and compiles the corpus's
example_gemm and example_gemm_autotune at a small shape; TileLang is handed the same call our frontend binds; the
bound holds for fp32 sums and catches a dropped K tile; the measuring path's bookkeeping
(judging, the table, ratios, the issue's targets, JSON, exit status) runs with our runner
replaced by numpy, and with TileLang and torch stand-ins. On the GPU (`gpu`, `tilelang`):
the benchmark itself at a small size, every column a number within the bound."""
from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from benchmarks import gemm_same_source as bench
from benchmarks import corpus_kernel, same_source
from cuda_env import gpu_problem, nvcc
from test_benchmark_gemv import _Event, _Tensor, absent_runtimes
from verify_reducer.spec.ir import Alloc, walk

SHAPE = "256x256x512"
ROOT = Path(__file__).resolve().parent.parent


def test_dry_run_plans_renders_and_compiles_the_example(tmp_path, capsys):
    out = tmp_path / "dry.json"
    assert bench.main(["--dry-run", "--shapes", SHAPE, "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    commit = "a35008a42531c62b976ae4cec3855d4383db0f3c"
    assert doc["sources"] == {
        "example": f"tile-ai/tilelang examples/gemm/example_gemm.py @ {commit}",
        "autotune": f"tile-ai/tilelang examples/gemm/example_gemm_autotune.py @ {commit}"}
    assert f"source example: {doc['sources']['example']}" in printed
    row, autotune = doc["rows"]
    assert row["label"] == "256x256x512 128x128x32"
    assert autotune["label"] == "256x256x512 autotune 128x256x64s3/256"
    cfg = bench.Config(**row["config"])
    func = bench.KERNEL.parse(cfg.call)
    a, b, c = func.params
    assert (a.shape, b.shape, c.shape) == ((256, 512), (512, 256), (256, 256))
    assert [p.dtype.name for p in func.params] == ["float16"] * 3
    assert (func.kernel.grid, func.kernel.threads) == ((2, 2), 128)
    shared = sorted(s.buffer.shape for s in walk(func.kernel.body)
                    if isinstance(s, Alloc) and s.buffer.scope == "shared")
    assert shared == [(32, 128), (128, 32)]
    # the autotune source at its sm_90 tiling: B stored (N, K), 256 threads, rasterized
    cfg = bench.Config(**autotune["config"])
    func = cfg.kernel.parse(cfg.call)
    a, b, c = func.params
    assert (a.shape, b.shape, c.shape) == ((256, 512), (256, 512), (256, 256))
    assert (func.kernel.grid, func.kernel.threads) == ((1, 2), 256)
    shared = sorted(s.buffer.shape for s in walk(func.kernel.body)
                    if isinstance(s, Alloc) and s.buffer.scope == "shared")
    assert shared == [(128, 64), (128, 256), (256, 64)]
    for plan in [*row["plans"].values(), *autotune["plans"].values()]:
        assert plan["reason"] is None and plan["cuda_lines"] > 0, plan
    if nvcc():                     # the CUDA compiles: ptxas's figures are printed
        assert "registers" in printed.split("canonical", 1)[1]
        assert "ptxas: PtxasFailed" not in printed


def test_a_tiling_that_does_not_divide_is_refused(capsys):
    with pytest.raises(SystemExit) as exited:
        bench.main(["--dry-run", "--shapes", "256x256x500"])
    assert exited.value.code == 2
    assert "multiples of block_M" in capsys.readouterr().err


@pytest.mark.parametrize("argv, said", [
    (["--sources", "example", "--tilings", "128x128x32s2/256"], "writes its stages and threads"),
    (["--sources", "cutlass"], "unknown source(s) cutlass"),
    (["--tilings", "128x128"], "is not a tiling BMxBNxBK[sSTAGES/THREADS]")])
def test_a_source_or_tiling_that_cannot_run_is_a_usage_error(argv, said, capsys):
    with pytest.raises(SystemExit) as exited:
        bench.main(["--dry-run", "--shapes", SHAPE, *argv])
    assert exited.value.code == 2
    assert said in capsys.readouterr().err


def test_a_tiling_applies_to_each_source_with_its_own_schedule():
    """stages and threads left out take the source's own: the example's are written in
    its body, the autotune example's are factory parameters."""
    configs = []
    original = bench.run
    try:
        bench.run = lambda parser, args, cfgs, *rest, **doc: configs.extend(cfgs) or 0
        assert bench.main(["--shapes", SHAPE, "--tilings", "64x64x32,128x256x64s4/128"]) == 0
    finally:
        bench.run = original
    assert [c.label for c in configs] == [
        "256x256x512 64x64x32", "256x256x512 128x256x64s4/128",
        "256x256x512 autotune 64x64x32s3/256", "256x256x512 autotune 128x256x64s4/128"]
    assert configs[0].check() is None and "writes its stages" in configs[1].check()
    assert dict(configs[3].call.kwargs)["num_stages"] == 4
    assert dict(configs[3].call.kwargs)["thread_num"] == 128
    assert dict(configs[2].call.kwargs)["enable_rasteration"] is True


def test_tilelang_gets_the_call_our_frontend_binds(monkeypatch):
    """The same file, the @autotune bypassed, `.compile` with our bound values."""
    calls = []
    jit = types.SimpleNamespace(compile=lambda *a, **k: calls.append((a, k)) or "kernel")
    module = types.SimpleNamespace(matmul=types.SimpleNamespace(jit_impl=jit))
    loaded = []
    monkeypatch.setattr(corpus_kernel.tilelang_backend, "load_program_module",
                        lambda path: loaded.append(path) or module)
    cfg = bench.Config(4096, 4096, 4096, 128, 128, 32)
    assert bench.KERNEL.tilelang_kernel(cfg.call) == "kernel"
    assert loaded == [str(bench.KERNEL.path)]
    assert calls == [((), {"M": 4096, "N": 4096, "K": 4096, "block_M": 128,
                           "block_N": 128, "block_K": 32})]
    assert bench.KERNEL.bound_source(cfg.call).endswith(
        "\n_bound = matmul(M=4096, N=4096, K=4096, block_M=128, block_N=128, block_K=32)\n")


def _fp32_gemm(data, drop_tile: bool = False) -> np.ndarray:
    """C as fp32 sums of exact fp16 products, rounded to fp16; drop_tile loses the first
    32-wide K tile, as a kernel that skips a pipeline stage would. A B stored (N, K)
    (the autotune source's) is read transposed: the tests' shapes have N != K."""
    a, b = data["A"].astype(np.float32), data["B"].astype(np.float32)
    if b.shape[0] != a.shape[1]:
        b = b.T
    if drop_tile:
        a = a.copy()
        a[:, :32] = 0
    return (a @ b).astype(np.float16)


def test_bound_holds_for_fp32_sums_and_catches_a_dropped_tile():
    data = bench.make_inputs(bench.Config(64, 64, 4096, 64, 64, 32))
    ref = same_source.Reference.of(data["A"], data["B"])
    assert ref.judge(_fp32_gemm(data), bench.FP16_UNIT, "C")[1] is None
    serial = np.cumsum(data["A"].astype(np.float32)[:, :, None] *
                       data["B"].astype(np.float32)[None], axis=1, dtype=np.float32)[:, -1]
    assert ref.judge(serial.astype(np.float16), bench.FP16_UNIT, "C")[1] is None
    worst, wrong = ref.judge(_fp32_gemm(data, drop_tile=True), bench.FP16_UNIT, "C")
    count, rest = wrong.split(" ", 1)
    assert worst > 100 and int(count) > 3900, wrong     # nearly every element of C
    assert rest.startswith("of 4096 elements outside the bound: C[0, 0] = ")


def stand_in_runner(monkeypatch, outputs, times: dict[str, float]) -> None:
    """same_source's runner replaced: run_cuda(plan, data) is outputs(plan, data), and
    time_cuda times[the plan's planner] µs."""
    monkeypatch.setattr(same_source, "run_cuda", outputs)
    monkeypatch.setattr(same_source, "time_cuda",
                        lambda plan, data, repeat: times[plan.planner])


def _fake_runner(monkeypatch, wrong: bool):
    stand_in_runner(monkeypatch, lambda plan, data: {"C": _fp32_gemm(
        data, drop_tile=wrong and plan.planner == "canonical")},
        {"fast": 400.0, "canonical": 420.0})


def test_measuring_without_torch_and_tilelang_marks_a_wrong_result(tmp_path, capsys,
                                                                    monkeypatch):
    _fake_runner(monkeypatch, wrong=True)
    monkeypatch.setattr(same_source, "discover_runtimes", lambda columns: absent_runtimes())
    out = tmp_path / "gemm.json"
    assert bench.main(["--sources", "example", "--shapes", SHAPE, "--repeat", "2",
                       "--json", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "!!! 1 WRONG RESULT(S)" in printed and "targets (issue 28):" in printed
    doc = json.loads(out.read_text())
    [row] = doc["rows"]
    assert row["fast"]["us"] == 400.0 and row["fast"]["wrong"] is None
    assert row["fast"]["tflops"] == 2 * 256 * 256 * 512 / 400.0 / 1e6
    assert "elements outside the bound" in row["canonical"]["wrong"]
    assert row["tilelang"]["reason"] == "torch: not here"
    assert row["ratios"] == {"ours/TL": None, "ours/cuBLAS": None, "canon/fast": None}
    assert any("WRONG" in f and "canonical" in f for f in doc["failures"])
    assert [t["status"] for t in doc["targets"]] == ["n/a", "n/a"]


def _fake_torch():
    def matmul(a, b, out):
        out.array[...] = (a.array.astype(np.float32) @ b.array.astype(np.float32))
    cuda = types.SimpleNamespace(is_available=lambda: True, synchronize=lambda: None,
                                 get_device_name=lambda: "fake GPU", Event=_Event)
    return types.SimpleNamespace(
        __version__="0.fake", cuda=cuda, float16=np.float16, matmul=matmul,
        backends=types.SimpleNamespace(cuda=types.SimpleNamespace(
            matmul=types.SimpleNamespace(allow_fp16_reduced_precision_reduction=True))),
        from_numpy=lambda a: _Tensor(np.array(a)),
        empty=lambda shape, dtype, device: _Tensor(np.empty(shape, dtype)))


def test_measuring_with_tilelang_and_torch_runs_every_column(tmp_path, capsys, monkeypatch):
    """TileLang's kernel (our numpy GEMM, 12 µs a launch by the fake events) and
    torch.matmul get numbers, torch's fp16 reductions are turned off, and the targets
    are judged on the ratios: ours 400 µs against 12 µs fails both."""
    _fake_runner(monkeypatch, wrong=False)
    torch = _fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(same_source, "discover_runtimes", lambda columns: same_source.Runtimes(
        torch=torch, tilelang=object(), environment={"tilelang": "0.1.15"}))
    compiled = []

    def kernel(a, b):
        return _Tensor(_fp32_gemm({"A": a.array, "B": b.array}))
    monkeypatch.setattr(_Tensor, "t", lambda self: _Tensor(self.array.T), raising=False)
    monkeypatch.setattr(corpus_kernel.CorpusKernel, "tilelang_kernel",
                        lambda self, call: compiled.append(call) or kernel)
    out = tmp_path / "gemm.json"
    assert bench.main(["--shapes", SHAPE, "--repeat", "2", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    row, autotune = doc["rows"]
    assert compiled == [bench.Config(256, 256, 512, 128, 128, 32).call,
                        bench.Config(256, 256, 512, 128, 256, 64, "autotune").call]
    # the autotune source's B is (N, K): ours, TileLang's and cuBLAS's C all equal A @ B.T
    assert all(autotune[c]["us"] is not None and autotune[c]["wrong"] is None
               for c in bench.COLUMNS), autotune
    assert all(row[c]["us"] is not None and row[c]["wrong"] is None for c in bench.COLUMNS)
    assert torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction is False
    assert row["tilelang"]["us"] == 12.0 and row["torch.matmul"]["us"] == 12.0
    assert abs(row["ratios"]["ours/TL"] - 12 / 400) < 1e-12
    assert abs(row["ratios"]["canon/fast"] - 420 / 400) < 1e-12
    assert [t["status"] for t in doc["targets"]] == ["FAIL", "FAIL"]
    assert "no failures" in capsys.readouterr().out


def test_plans_with_the_same_cuda_are_timed_once(monkeypatch):
    """fast and canonical rendering one unit: one kernel timed, the second cell says so."""
    timed = []
    monkeypatch.setattr(same_source, "run_cuda", lambda plan, data: {"y": 0})
    monkeypatch.setattr(same_source, "time_cuda",
                        lambda plan, data, repeat: timed.append(plan) or 5.0)
    planned = {p: same_source.Planned(p, p, unit="the same unit") for p in same_source.OURS}
    cells = same_source.ours_cells(planned, {}, lambda out: (0.0, None), 3)
    assert timed == ["fast"] and cells["canonical"].us == 5.0
    assert cells["canonical"].same_as == "fast" and cells["fast"].same_as is None
    assert cells["canonical"].summary(10.0)["same_cuda_as"] == "fast"


def run_on_the_gpu(script: str, args: list[str], out) -> dict:
    """The benchmark as the lead runs it, in a process of its own (a fault or a hang
    ends that run only), at a small size; its JSON document, after checking that no
    result was WRONG and that ours and torch have numbers (TileLang too, where it is
    installed)."""
    import subprocess
    done = subprocess.run([sys.executable, f"benchmarks/{script}", *args, "--repeat", "3",
                           "--json", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=540)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    doc = json.loads(out.read_text())
    tilelang = same_source.tilelang_backend.unavailable_reason()
    for row in doc["rows"]:
        for column in (c for c in row if isinstance(row[c], dict) and "us" in row[c]):
            cell = row[column]
            if column == "tilelang" and tilelang is not None:
                assert cell["reason"] == tilelang, cell
                continue
            assert cell["us"] and cell["wrong"] is None, (row["label"], column, cell)
    return doc


@pytest.mark.gpu
@pytest.mark.tilelang
@pytest.mark.skipif(gpu_problem() is not None, reason=gpu_problem() or "")
def test_on_the_gpu_every_column_equals_the_reference(tmp_path):
    doc = run_on_the_gpu("gemm_same_source.py", ["--shapes", "512x512x1024",
                                                 "--tilings", "128x128x32,64x64x32"],
                         tmp_path / "gemm.json")
    assert [r["label"] for r in doc["rows"]] == [
        "512x512x1024 128x128x32", "512x512x1024 64x64x32",
        "512x512x1024 autotune 128x128x32s3/256", "512x512x1024 autotune 64x64x32s3/256"]


def test_the_targets_take_the_best_of_each_side_per_shape():
    """Ours at its fastest tiling (any source) against TileLang's fastest and cuBLAS's
    fastest cell of the same shape: 100 µs against 85 and 79 µs passes 0.8x TileLang
    (0.85) and misses 0.8x cuBLAS (0.79); a WRONG cell does not count."""
    def cell(us, wrong=None):
        return {"us": us, "wrong": wrong}

    def row(label, fast, canonical, tilelang, cublas):
        return {"label": label, "fast": cell(fast), "canonical": cell(canonical),
                "tilelang": cell(tilelang), "torch.matmul": cell(cublas)}
    rows = [row("64x64x64 128x128x32", 130.0, 140.0, 120.0, 80.0),
            row("64x64x64 autotune 128x256x64s3/256", 100.0, 101.0, 85.0, 79.0),
            row("64x64x64 autotune 256x128x64s3/256", 90.0, 95.0, 88.0, 81.0)]
    for plan in ("fast", "canonical"):
        rows[2][plan]["wrong"] = "1 of 4096 elements outside the bound"
    to_tilelang, to_cublas = bench.targets(rows)
    assert to_tilelang["status"] == "PASS" and abs(to_tilelang["worst"] - 0.85) < 1e-12
    assert to_cublas["status"] == "FAIL" and abs(to_cublas["worst"] - 0.79) < 1e-12
    assert to_cublas["detail"] == "worst 0.790 at 64x64x64"

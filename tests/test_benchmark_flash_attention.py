"""benchmarks/flash_attention.py without a GPU: the dry run parses, plans, renders and
compiles the corpus's example_mha_fwd_bshd at a small shape (the BHSD example is parsed
and planned); TileLang is handed the call our frontend binds; the reference's bound holds
for an fp32 emulation of the kernel's online softmax (P rounded to fp16) and catches a
dropped K/V tile and a missing rescale; the measuring path's bookkeeping runs with our
runner replaced by that emulation, with TileLang and torch absent and as stand-ins. On
the GPU (`gpu`, `tilelang`): the benchmark itself at a small size, both examples, every
column a number within the bound."""
from __future__ import annotations

import json
import sys
import types

import numpy as np
import pytest

from benchmarks import flash_attention as bench
from benchmarks import corpus_kernel, same_source
from cuda_env import gpu_problem, nvcc
from test_benchmark_gemm import run_on_the_gpu, stand_in_runner
from test_benchmark_gemv import _Event, _Tensor, absent_runtimes

SHAPE = (1, 2, 256, 64)


def config(layout="bshd", causal=True, block=64) -> bench.Config:
    return bench.Config(layout, causal, *SHAPE, block, block, 1, 128)


def emulate(cfg: bench.Config, data: dict, fault: str | None = None) -> np.ndarray:
    """The kernel's algorithm in fp32 per (batch, head): per K/V tile, S = Q K^T, the
    running maximum, P = exp2(S c - m c), l and acc_o rescaled, acc_o += fp16(P) V; then
    acc_o / l in fp16. fault: "drop" skips the last K/V tile, "rescale" never rescales
    acc_o (the online softmax's classic bug)."""
    q, k, v = (bench.per_head(data[n], cfg.layout).astype(np.float32) for n in "QKV")
    c = np.float32(cfg.scale_log2)
    out = np.empty(q.shape, np.float16)
    s_len, tiles = q.shape[2], q.shape[2] // cfg.block_n
    rows = np.arange(s_len)[:, None]
    for i in range(q.shape[0]):
        for j in range(q.shape[1]):
            top = np.full(s_len, -np.inf, np.float32)
            total = np.zeros(s_len, np.float32)
            acc = np.zeros((s_len, q.shape[3]), np.float32)
            for t in range(tiles - (fault == "drop")):
                keys = slice(t * cfg.block_n, (t + 1) * cfg.block_n)
                scores = q[i, j] @ k[i, j, keys].T
                if cfg.causal:
                    scores[rows < np.arange(keys.start, keys.stop)[None]] = -np.inf
                new = np.maximum(top, scores.max(axis=1))
                with np.errstate(invalid="ignore"):
                    factor = np.nan_to_num(np.exp2(top * c - new * c))
                p = np.exp2(scores * c - new[:, None] * c)
                total = total * factor + p.sum(axis=1, dtype=np.float32)
                acc = acc * (factor[:, None] if fault != "rescale" else 1) + \
                    p.astype(np.float16).astype(np.float32) @ v[i, j, keys]
                top = new
            out[i, j] = (acc / total[:, None]).astype(np.float16)
    return bench.per_head(out, cfg.layout)


def test_dry_run_plans_renders_and_compiles_the_example(tmp_path, capsys):
    out = tmp_path / "dry.json"
    assert bench.main(["--dry-run", "--shape", "x".join(map(str, SHAPE)), "--causal", "yes",
                       "--tilings", "64x64s1/128", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert ("source (bshd): tile-ai/tilelang examples/flash_attention/"
            "example_mha_fwd_bshd.py @ a35008a42531c62b976ae4cec3855d4383db0f3c") in printed
    [row] = json.loads(out.read_text())["rows"]
    assert row["label"] == "bshd causal 64x64s1/128"
    func = bench.KERNELS["bshd"].parse(bench.Config(**row["config"]).call)
    assert [p.shape for p in func.params] == [(1, 256, 2, 64)] * 4
    assert (func.kernel.grid, func.kernel.threads) == ((4, 2, 1), 128)
    for plan in row["plans"].values():
        assert plan["reason"] is None and plan["cuda_lines"] > 0, plan
    if nvcc():
        assert printed.count("registers, ") >= 2 and "PtxasFailed" not in printed


def test_the_bhsd_example_is_read_at_its_own_tiling():
    cfg = bench.Config("bhsd", False, 1, 2, 256, 64, 128, 128, 2, 256)
    func = bench.KERNELS["bhsd"].parse(cfg.call)
    assert [p.shape for p in func.params] == [(1, 2, 256, 64)] * 4
    assert (func.kernel.grid, func.kernel.threads) == ((2, 2, 1), 256)
    assert cfg.call.text() == ("1, 2, 256, 256, 64, False, block_M=128, block_N=128, "
                               "num_stages=2, threads=256")
    planned = bench.plan_config(cfg)
    assert all(p.plan is not None for p in planned.values())


def test_tilelang_bypasses_the_autotuner_with_our_call(monkeypatch):
    calls = []
    jit = types.SimpleNamespace(compile=lambda *a, **k: calls.append((a, k)) or "kernel")
    tuned = types.SimpleNamespace(jit_impl=jit, configs=["others"])
    monkeypatch.setattr(corpus_kernel.tilelang_backend, "load_program_module",
                        lambda path: types.SimpleNamespace(flashattn=tuned))
    cfg = bench.Config("bshd", True, 1, 32, 4096, 128, 128, 128, 1, 128)
    assert bench.KERNELS["bshd"].tilelang_kernel(cfg.call) == "kernel"
    assert calls == [((1, 32, 4096, 128, True), {"block_M": 128, "block_N": 128,
                                                  "num_stages": 1, "threads": 128})]


@pytest.mark.parametrize("layout,causal", [("bshd", True), ("bshd", False), ("bhsd", True)])
def test_bound_holds_for_the_kernels_arithmetic_and_catches_faults(layout, causal):
    cfg = config(layout, causal)
    data = bench.make_inputs(cfg)
    ref = bench.AttentionReference.of(cfg, data)
    worst, wrong = ref.judge_of(cfg.block_n)(emulate(cfg, data))
    assert wrong is None and worst < 0.5, worst          # inside, with room
    for fault in ("drop", "rescale"):
        worst, wrong = ref.judge_of(cfg.block_n)(emulate(cfg, data, fault))
        assert worst > 5 and "elements outside the bound: Output[" in wrong, (fault, worst)


def _fake_runner(monkeypatch, fault_in_canonical: bool):
    def run_cuda(plan, data):      # every measuring test runs config()
        fault = "drop" if fault_in_canonical and plan.planner == "canonical" else None
        return {"Output": emulate(config(), data, fault)}
    stand_in_runner(monkeypatch, run_cuda, {"fast": 50.0, "canonical": 55.0})


def test_measuring_without_torch_and_tilelang_marks_a_wrong_result(tmp_path, capsys,
                                                                    monkeypatch):
    _fake_runner(monkeypatch, fault_in_canonical=True)
    monkeypatch.setattr(same_source, "discover_runtimes", lambda columns: absent_runtimes())
    out = tmp_path / "fa.json"
    assert bench.main(["--shape", "x".join(map(str, SHAPE)), "--causal", "yes",
                       "--tilings", "64x64s1/128", "--repeat", "2", "--json", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "!!! 1 WRONG RESULT(S)" in printed
    doc = json.loads(out.read_text())
    [row] = doc["rows"]
    assert row["fast"]["wrong"] is None and "outside the bound" in row["canonical"]["wrong"]
    assert row["fast"]["tflops"] == 4 * 2 * 256 * 256 * 64 / 2 / 50.0 / 1e6
    assert row["torch.sdpa"]["reason"] == "torch: not here"
    assert [t["status"] for t in doc["targets"]] == ["n/a"]


def _once(cfg: bench.Config, data: dict, done={}) -> np.ndarray:     # noqa: B006
    """emulate(cfg, data), computed once per inputs (the stand-ins are launched a dozen
    times by the timing loop)."""
    key = (cfg, *(np.ascontiguousarray(data[n]).tobytes() for n in "QKV"))
    if key not in done:
        done.clear()
        done[key] = emulate(cfg, data)
    return done[key]


def _fake_torch(cfg: bench.Config):
    def sdpa(q, k, v, is_causal):
        assert is_causal == cfg.causal
        data = {n: bench.per_head(t.array, cfg.layout) for n, t in zip("QKV", (q, k, v))}
        return _Tensor(bench.per_head(_once(cfg, data), cfg.layout))
    cuda = types.SimpleNamespace(is_available=lambda: True, synchronize=lambda: None,
                                 get_device_name=lambda: "fake GPU", Event=_Event)
    return types.SimpleNamespace(
        __version__="0.fake", cuda=cuda, from_numpy=lambda a: _Swappable(np.array(a)),
        nn=types.SimpleNamespace(functional=types.SimpleNamespace(
            scaled_dot_product_attention=sdpa)))


class _Swappable(_Tensor):
    def swapaxes(self, a, b):
        return _Swappable(self.array.swapaxes(a, b))


def test_measuring_with_tilelang_and_torch_runs_every_column(tmp_path, capsys, monkeypatch):
    """SDPA gets (B, H, S, D) views of the BSHD tensors and its output is judged in the
    BSHD layout; TileLang's kernel returns Output; at 12 µs against our 50 the target
    fails."""
    cfg = config()
    _fake_runner(monkeypatch, fault_in_canonical=False)
    torch = _fake_torch(cfg)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(same_source, "discover_runtimes", lambda columns: same_source.Runtimes(
        torch=torch, tilelang=object(), environment={"tilelang": "0.1.15"}))
    compiled = []

    def kernel(q, k, v):
        return _Tensor(_once(cfg, {"Q": q.array, "K": k.array, "V": v.array}))
    monkeypatch.setattr(corpus_kernel.CorpusKernel, "tilelang_kernel",
                        lambda self, call: compiled.append((self.stem, call)) or kernel)
    out = tmp_path / "fa.json"
    assert bench.main(["--shape", "x".join(map(str, SHAPE)), "--causal", "yes",
                       "--tilings", "64x64s1/128", "--repeat", "2", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    [row] = doc["rows"]
    assert compiled == [("mha_fwd_bshd", cfg.call)]
    assert all(row[c]["us"] is not None and row[c]["wrong"] is None for c in bench.COLUMNS)
    assert abs(row["ratios"]["ours/TL"] - 12 / 50) < 1e-12
    assert doc["targets"][0]["status"] == "FAIL"
    assert "no failures" in capsys.readouterr().out


def test_the_target_compares_the_best_tiling_of_each_side():
    def row(group, tl, fast, can):
        cell = lambda us: {"us": us, "wrong": None}    # noqa: E731
        return {"group": group, "tilelang": cell(tl), "fast": cell(fast),
                "canonical": cell(can)}
    rows = [row("bshd full", 100.0, None, None), row("bshd full", 80.0, 95.0, 99.0),
            row("bshd causal", 50.0, None, None)]
    [target] = bench.targets(rows)
    assert target["status"] == "FAIL"
    assert target["detail"] == ("worst 0.842 at bshd full; ours has no usable number at "
                                "bshd causal")


@pytest.mark.gpu
@pytest.mark.tilelang
@pytest.mark.skipif(gpu_problem() is not None, reason=gpu_problem() or "")
def test_on_the_gpu_every_column_equals_the_reference(tmp_path):
    """Both examples, causal (the mask and the shortened loop), at the factories' default
    tiling, 2 heads of 512 tokens, head dim 64: two TileLang compiles."""
    doc = run_on_the_gpu("flash_attention.py", ["--shape", "1x2x512x64", "--layout", "both",
                                                "--causal", "yes", "--tilings", "64x64s1/128"],
                         tmp_path / "fa.json")
    assert [r["label"] for r in doc["rows"]] == ["bshd causal 64x64s1/128",
                                                 "bhsd causal 64x64s1/128"]


@pytest.mark.parametrize("args,message", [
    (["--tilings", "64x48s1/128"], "the tokens must be a multiple of block_M and block_N"),
    (["--tilings", "64x64"], "'64x64' is not a tiling BMxBNsSTAGES/THREADS"),
    (["--shape", "1x2x256"], "'1x2x256' is not a shape BATCHxHEADSxTOKENSxDIM"),
    (["--repeat", "0"], "need at least one configuration and --repeat >= 1")])
def test_a_configuration_that_cannot_run_is_a_usage_error(args, message, capsys):
    with pytest.raises(SystemExit) as exited:
        bench.main(["--dry-run", "--shape", "1x2x256x64", *args])
    assert exited.value.code == 2 and message in capsys.readouterr().err

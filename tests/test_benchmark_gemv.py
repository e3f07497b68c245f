"""benchmarks/gemv_same_source.py without a GPU: the dry run generates, parses, plans and
renders every tiling of one small shape, and what it reports is what the sources and
plans are (bf16: one tiling, to the rendered element type); the measuring path's bookkeeping (reference, bound, table, the
issue's targets, JSON, exit status) runs with our runner replaced by numpy and TileLang
and torch absent, as on a machine without them."""
from __future__ import annotations

import json
import sys
import types

import numpy as np

from benchmarks import gemv_same_source as bench
from benchmarks import same_source
from fake_tilelang import FakeTileLang
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.ir import Alloc, walk
from verify_reducer.spec.target import target

M, K = 256, 1024


def test_dry_run_reports_every_source_plan_and_its_resources(tmp_path, capsys):
    out = tmp_path / "dry.json"
    assert bench.main(["--dry-run", "--shapes", f"{M}x{K}", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = json.loads(out.read_text())["rows"]
    assert [r["label"] for r in rows] == [f"{M}x{K} float16 {bm}x{bk}/{t}"
                                          for bm, bk, t in bench.TILINGS]
    for row in rows:
        cfg = bench.Config(**row["config"])
        assert f"{cfg.label}: grid ({M // cfg.block_m},)" in printed
        func = parse_source(bench.gemv_source(cfg), "gemv.py").func()
        a, x, y = func.params
        assert (a.shape, a.dtype.name, x.shape, x.dtype.name, y.dtype.name) == \
            ((M, K), cfg.dtype, (K,), cfg.dtype, "float32")
        shared = [s.buffer.shape for s in walk(func.kernel.body)
                  if isinstance(s, Alloc) and s.buffer.scope == "shared"]
        assert shared == [(cfg.block_m, cfg.block_k)]
        assert (func.kernel.threads, func.kernel.grid) == (cfg.threads, (M // cfg.block_m,))
        for planner, plan in row["plans"].items():
            res = plan["resources"]
            if res is None:                    # refused: the table says why
                assert plan["reason"] and plan["chosen"].startswith("refused"), plan
                continue
            assert plan["cuda_lines"] > 0 or plan["reason"].startswith("render"), plan
            limits = target(res["target"])
            within = res["shared_bytes"] <= limits.dynamic_shared_bytes and \
                res["register_words"] <= res["register_budget"]
            assert within or plan["flags"], (cfg.label, planner, plan)
            assert plan["chosen"].startswith("all-reduce width"), plan


def test_bfloat16_source_is_parsed_and_rendered_as_bfloat16():
    cfg = bench.Config(M, K, "bfloat16", 32, 64, 128)
    func, planned = bench.plan_config(cfg)
    assert [p.dtype.name for p in func.params] == ["bfloat16", "bfloat16", "float32"]
    from verify_reducer.codegen.cuda import render
    text = render(planned["canonical"].plan).translation_unit()
    assert "__nv_bfloat16" in text and planned["canonical"].reason is None


def _fake_runner(monkeypatch, wrong_threads):
    """run_cuda as numpy (fp32 sums); the canonical plan at wrong_threads threads drops
    its first K tile, as a broken kernel would. time_cuda: fast 10 µs, canonical 10.4."""
    def run_cuda(plan, data):
        a, x = data["A"].astype(np.float32), data["x"].astype(np.float32)
        if plan.planner == "canonical" and plan.func.kernel.threads == wrong_threads:
            a = a.copy()
            a[:, :64] = 0
        return {"y": a @ x}
    monkeypatch.setattr(same_source, "run_cuda", run_cuda)
    monkeypatch.setattr(same_source, "time_cuda", lambda plan, data, repeat:
                        {"fast": 10.0, "canonical": 10.4}[plan.planner])


def absent_runtimes() -> bench.Runtimes:
    """What discover_runtimes finds on a machine without torch and TileLang."""
    return bench.Runtimes(missing={
        "torch": "torch: not here", "tl-default": "TileLang is not installed",
        "tl-baseline": "TileLang is not installed"})


def test_measuring_without_torch_and_tilelang_marks_wrong_results(tmp_path, capsys,
                                                                  monkeypatch):
    _fake_runner(monkeypatch, wrong_threads=128)
    monkeypatch.setattr(bench, "discover_runtimes", absent_runtimes)
    out = tmp_path / "gemv.json"
    status = bench.main(["--shapes", f"{M}x{K}", "--tilings", "64x256/256,32x64/128",
                         "--repeat", "3", "--json", str(out)])
    printed = capsys.readouterr().out
    assert status == 1 and "!!! 1 WRONG RESULT(S)" in printed
    doc = json.loads(out.read_text())
    good, bad = doc["rows"]
    assert good["fast"]["us"] == 10.0 and good["canonical"]["wrong"] is None
    assert good["canonical"]["tbps"] == good["bytes"] / 10.4 / 1e6
    assert abs(good["ratios"]["canon/fast"] - 1.04) < 1e-9
    assert good["ratios"]["canon/TL"] is None and good["ratios"]["best/copy"] is None
    assert "rows outside the bound" in bad["canonical"]["wrong"]
    assert good["tl-default"]["reason"] == "TileLang is not installed"
    assert doc["groups"][0]["torch.mv"]["reason"] == "torch: not here"
    assert any("WRONG" in f and "32x64/128 canonical" in f for f in doc["failures"])
    # vs TileLang: nothing to compare with, but ours is wrong at one tiling (FAIL);
    # vs copy: no torch, nothing measurable; canonical/fast: the wrong tiling fails
    assert [t["status"] for t in doc["targets"]] == ["FAIL", "n/a", "FAIL"]
    assert "n/a [" in printed and "targets (issue 11):" in printed


def test_verdict_passes_with_unmeasurable_cases_named():
    cases = [("a", 0.97, False), ("b", None, False), ("c", 0.99, False)]
    v = bench.verdict("t", cases, 0.95, at_least=True)
    assert v["status"] == "PASS" and v["worst"] == 0.97
    assert "1 of 3 cases not measurable" in v["detail"]
    assert bench.verdict("t", [("a", 1.2, False)], 1.05, at_least=False)["status"] == "FAIL"
    assert bench.verdict("t", [("a", None, False)], 1.05, at_least=False)["status"] == "n/a"


def test_bound_holds_for_serial_fp32_sums_and_catches_a_dropped_tile():
    data = bench.make_inputs(8, 65536, "float16")
    ref = bench.Reference.of(data["A"], data["x"])
    products = data["A"].astype(np.float32) * data["x"].astype(np.float32)
    serial = np.cumsum(products, axis=1, dtype=np.float32)[:, -1]   # one long fp32 chain
    assert ref.judge(serial)[1] is None
    dropped = products[:, 64:].sum(axis=1, dtype=np.float32)
    assert "outside the bound" in ref.judge(dropped)[1]


class _Tensor:
    """A host array as the fake torch's tensor (TileLang's fake kernel reads .array)."""

    def __init__(self, array):
        self.array = array
        self.shape, self.dtype = array.shape, array.dtype

    def to(self, *_):
        return self

    def float(self):
        return _Tensor(self.array.astype(np.float32))

    def cpu(self):
        return self

    def numpy(self):
        return self.array

    def copy_(self, other):
        self.array[...] = other.array


class _Event:
    """Every launch takes 12 µs."""

    def __init__(self, enable_timing):
        assert enable_timing

    def record(self):
        pass

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return 0.012


def _fake_torch():
    def mv(a, x, out):
        out.array[...] = a.array.astype(np.float32) @ x.array.astype(np.float32)
    cuda = types.SimpleNamespace(is_available=lambda: True, synchronize=lambda: None,
                                 get_device_name=lambda: "fake GPU", Event=_Event)
    return types.SimpleNamespace(
        __version__="0.fake", cuda=cuda, float16=np.float16, bfloat16=np.float32,
        float32=np.float32, from_numpy=lambda a: _Tensor(np.array(a)), mv=mv,
        zeros=lambda n, dtype, device: _Tensor(np.zeros(n, dtype)),
        empty=lambda n, dtype, device: _Tensor(np.empty(n, dtype)),
        empty_like=lambda t: _Tensor(np.empty_like(t.array)),
        equal=lambda a, b: np.array_equal(a.array, b.array))


def test_measuring_with_tilelang_and_torch_runs_every_column(tmp_path, capsys, monkeypatch):
    """TileLang (tests/fake_tilelang) and torch stand-ins: the same source is loaded and
    compiled once per TileLang plan with that plan's pass configs, every column gets a
    number, and the targets are judged on them."""
    _fake_runner(monkeypatch, wrong_threads=None)
    fake = FakeTileLang(respond=lambda arrays: {
        "y": arrays["A"].astype(np.float32) @ arrays["x"].astype(np.float32)})
    fake.install(monkeypatch)
    monkeypatch.setitem(sys.modules, "torch", _fake_torch())
    out = tmp_path / "gemv.json"
    assert bench.main(["--shapes", f"{M}x{K}", "--tilings", "32x64/128", "--repeat", "2",
                       "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert [c["pass_configs"] for c in fake.compiled] == \
        [None, {"tl.reducer_force_baseline": True}]
    [row] = doc["rows"]
    assert all(row[c]["us"] is not None and row[c]["wrong"] is None for c in bench.COLUMNS)
    assert doc["groups"][0]["torch.mv"]["us"] == 12.0 and doc["failures"] == []
    assert abs(row["ratios"]["canon/TL"] - 12 / 10.4) < 1e-9
    assert doc["environment"]["tilelang"] == "0.1.15"
    assert [t["status"] for t in doc["targets"]] == ["PASS", "FAIL", "PASS"]
    assert "no failures" in capsys.readouterr().out

"""benchmarks/gemv_splitk.py without a GPU: the dry run generates, parses, plans and
renders every tiling from examples/gemv_splitk.py (the constants set once each, the grid
split along K, the atomic add into y); the measuring path's bookkeeping (the reference
judged from zeros, the table, the issue's targets, JSON, exit status) runs with our
runner replaced by numpy and TileLang and torch absent."""
from __future__ import annotations

import json

import numpy as np

from benchmarks import same_source
from benchmarks import gemv_splitk as bench
from test_benchmark_gemv import absent_runtimes
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.ir import AtomicUpdate, walk

M, K = 64, 4096


def test_dry_run_plans_every_tiling_from_the_example(tmp_path, capsys):
    out = tmp_path / "dry.json"
    tilings = "16x128s4/128,8x256s8/128"
    assert bench.main(["--dry-run", "--shape", f"{M}x{K}", "--tilings", tilings,
                       "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["label"] for r in rows] == [f"{M}x{K} float16 16x128 split 4/128",
                                          f"{M}x{K} float16 8x256 split 8/128"]
    for row in rows:
        cfg = bench.Config(**row["config"])
        func = parse_source(bench.splitk_source(cfg), "splitk.py").func()
        assert func.kernel.grid == (M // cfg.block_m, cfg.split)
        assert [s.op for s in walk(func.kernel.body) if isinstance(s, AtomicUpdate)] == ["sum"]
        for plan in row["plans"].values():
            assert plan["reason"] is None and plan["cuda_lines"] > 0, plan


def test_a_tiling_that_does_not_divide_is_refused(capsys):
    import pytest
    with pytest.raises(SystemExit) as exited:
        bench.main(["--dry-run", "--shape", f"{M}x{K}", "--tilings", "16x128s3/128"])
    assert exited.value.code == 2
    assert "K of SPLIT * BLOCK_K" in capsys.readouterr().err


def test_measuring_without_torch_and_tilelang_marks_a_wrong_result(tmp_path, capsys,
                                                                    monkeypatch):
    """The canonical plan of the second tiling loses one K slice, as a kernel whose
    atomic add of one split went missing would: WRONG, exit status 1."""
    def run_cuda(plan, data):
        a, x = data["A"].astype(np.float32), data["x"].astype(np.float32)
        if plan.planner == "canonical" and plan.func.kernel.grid[1] == 8:
            a = a.copy()
            a[:, :K // 8] = 0
        return {"y": data["y"] + a @ x}
    monkeypatch.setattr(same_source, "run_cuda", run_cuda)
    monkeypatch.setattr(same_source, "time_cuda", lambda plan, data, repeat:
                        {"fast": 10.0, "canonical": 10.5}[plan.planner])
    monkeypatch.setattr(bench, "discover_runtimes", absent_runtimes)
    out = tmp_path / "splitk.json"
    status = bench.main(["--shape", f"{M}x{K}", "--tilings", "16x128s4/128,8x256s8/128",
                         "--repeat", "3", "--json", str(out)])
    printed = capsys.readouterr().out
    assert status == 1 and "!!! 1 WRONG RESULT(S)" in printed
    doc = json.loads(out.read_text())
    good, bad = doc["rows"]
    assert good["fast"]["us"] == 10.0 and good["canonical"]["wrong"] is None
    assert "rows outside the bound" in bad["canonical"]["wrong"]
    assert good["ratios"] == {"best/TL": None, "best/copy": None}
    # nothing of TileLang's or torch's to compare with: both targets unmeasurable
    assert [t["status"] for t in doc["targets"]] == ["n/a", "n/a"]
    assert "n/a: TileLang is not installed" in printed

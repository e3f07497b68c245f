"""Lean JSON documents (issue 29): a tensor over 64 elements is summarized (shape, dtype,
element count, first 8 values, sha256 digest) unless --values asks for every value;
`check --json` of the 1024² GEMV with every block fits in 100 kB (it was 26.8 MB)."""
from __future__ import annotations

import hashlib
import json
import sys

import numpy as np

from test_cli_conventions import ROOT, assert_valid, cli

sys.path.insert(0, str(ROOT / "benchmarks"))
from check_scaling import gemv_source  # noqa: E402

PIPELINED = str(ROOT / "examples" / "gemv_pipelined.py")


def test_check_json_of_the_1024_gemv_with_every_block_is_small(capsys, tmp_path):
    path = tmp_path / "gemv1024.py"
    path.write_text(gemv_source(1024, 1024))
    code, out, _ = cli(capsys, "check", str(path), "--blocks", "all", "--json")
    assert code == 0 and len(out.encode()) < 100_000
    doc = json.loads(out)
    assert_valid(doc)
    a = doc["outputs"]["A"]
    assert (a["shape"], a["elements"], len(a["head"])) == ([1024, 1024], 1 << 20, 8)
    assert "values" not in a and a["digest"].startswith("sha256:")


def _digest(array: np.ndarray) -> str:
    return "sha256:" + hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def test_the_summary_is_the_tensor_the_npz_holds(capsys, tmp_path):
    """The digest and head are of the very values `run --output` saves."""
    npz = tmp_path / "out.npz"
    code, out, _ = cli(capsys, "run", PIPELINED, "--backend", "sim", "--json", "--output",
                       str(npz))
    assert code == 0
    doc = json.loads(out)
    assert_valid(doc)
    saved = np.load(npz)
    for name, summary in doc["outputs"].items():
        values = saved[name]
        if values.size <= 64:
            assert np.array_equal(np.asarray(summary["values"], values.dtype), values)
            continue
        assert summary["digest"] == _digest(values), name
        assert summary["head"] == values.reshape(-1)[:8].tolist()
        assert summary["elements"] == values.size and summary["dtype"] == str(values.dtype)


def test_values_gives_every_value(capsys):
    code, out, _ = cli(capsys, "check", PIPELINED, "--json", "--values")
    doc = json.loads(out)
    assert code == 0
    assert_valid(doc)
    a = doc["outputs"]["A"]
    assert "digest" not in a and np.asarray(a["values"]).shape == tuple(a["shape"])

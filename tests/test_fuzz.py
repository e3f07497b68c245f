"""The differential fuzzer: its programs are valid TileLang, the lowerings agree on them,
and a planted lowering bug is found and saved."""
import json

import numpy as np

from verify import pipeline
from verify.cli import main
from verify.fuzz import _kernel, fuzz, render
from spec.frontend import parse_source


def test_generated_programs_parse_and_verify(tmp_path):
    findings = fuzz(4, 0, str(tmp_path))
    assert findings == []
    assert list(tmp_path.iterdir()) == []       # nothing left behind when all agree


def test_generator_covers_the_surfaces_and_ops():
    kernels = [_kernel(np.random.default_rng([3, n])) for n in range(60)]
    assert {k.surface for k in kernels} == {"v2", "rfc", "legacy"}
    assert len({k.op for k in kernels}) >= 5
    for k in kernels[:10]:
        parse_source(render(k))


def test_a_planted_lowering_bug_is_found(tmp_path, monkeypatch):
    real = pipeline.make_plan

    def legacy_everywhere(loaded, planner):
        return real(loaded, "legacy")
    monkeypatch.setattr(pipeline, "make_plan", legacy_everywhere)
    findings = fuzz(4, 0, str(tmp_path))
    assert findings, "the legacy plan duplicates contributions; fuzzing must notice"
    assert {f.kind for f in findings} <= {"violation", "mismatch"}
    saved = tmp_path / findings[0].path.split("/")[-1]
    assert saved.read_text().startswith("# fuzz finding")


def test_cli_fuzz_json(tmp_path, capsys):
    code = main(["fuzz", "--count", "2", "--seed", "5", "--out", str(tmp_path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["findings"] == [] and doc["count"] == 2

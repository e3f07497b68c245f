"""Accepted findings (issue 29): a suppression comment with a mandatory reason, and
`[tool.verify-reducer]` in pyproject.toml; an accepted warning or note is reported as
suppressed with its reason, never dropped; an error is never accepted; a bad or stale
comment is R111."""
from __future__ import annotations

import json

import pytest

from test_cli_conventions import ROOT, assert_valid, cli

HISTOGRAM = ROOT / "tests" / "programs" / "valid" / "histogram_rolled_loop.py"
R201 = ROOT / "tests" / "programs" / "invalid" / "r201_update_after_finalize.py"
# the R400 note of the fast plan points at the reducer's allocation (line 20)
ALLOC = "        hist = T.alloc_reducer((64,), T.int32, op=\"sum\")"


def _histogram(tmp_path, comment: str = "", above: str = ""):
    text = HISTOGRAM.read_text()
    assert ALLOC in text
    replaced = (f"        {above}\n" if above else "") + ALLOC + \
        (f"  {comment}" if comment else "")
    path = tmp_path / "histogram.py"
    path.write_text(text.replace(ALLOC, replaced))
    return path


@pytest.mark.parametrize("where", ["end of line", "line above"])
def test_a_comment_with_a_reason_accepts_the_note_and_says_so(tmp_path, capsys,
                                                              monkeypatch, where):
    monkeypatch.chdir(tmp_path)
    directive = "# verify-reducer: ignore[R400] the bins are data: canonical is meant"
    path = _histogram(tmp_path, *((directive,) if where == "end of line" else
                                  ("", directive)))
    code, out, err = cli(capsys, "check", str(path))
    assert code == 0 and "fast plan refused" not in out + err
    line = 20 + (where == "line above")
    assert f"  suppressed     R400 at {line}:" in out
    assert out.rstrip().endswith("verdict: verified")
    code, out, _ = cli(capsys, "check", str(path), "--json")
    doc = json.loads(out)
    assert_valid(doc)
    [accepted] = doc["suppressed"]
    assert (accepted["code"], accepted["suppressed"]) == \
        ("R400", "the bins are data: canonical is meant")
    assert accepted["by"].startswith("comment at ")
    assert not any(n["code"] == "R400" for e in doc["epochs"] for n in e["notes"])
    code, out, _ = cli(capsys, "check", str(path), "--format", "sarif")
    [result] = [r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == "R400"]
    assert result["suppressions"] == [{"kind": "inSource", "justification":
                                       "the bins are data: canonical is meant"}]


@pytest.mark.parametrize("comment, message", [
    ("# verify-reducer: ignore[R400]", "gives no reason"),
    ("# verify-reducer: ignore[R999] typo", "unknown diagnostic code(s) R999"),
    ("# verify-reducer: skip this", "must read `# verify-reducer: ignore[CODE] reason`"),
])
def test_a_malformed_comment_is_an_r111_error(tmp_path, capsys, monkeypatch, comment,
                                              message):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "check", str(_histogram(tmp_path, comment)))
    assert code == 1 and "error[R111]" in err and message in err


def test_a_stale_comment_is_an_r111_warning(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "minimal.py"
    text = (ROOT / "examples" / "minimal_legacy.py").read_text()
    path.write_text(text.replace("T.copy(x, x_frag)",
                                 "T.copy(x, x_frag)  # verify-reducer: ignore[R506] old"))
    code, out, err = cli(capsys, "check", str(path))
    assert code == 0 and "warning[R111]" in err and "accepts nothing on line" in err


def test_an_error_is_never_accepted(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines = R201.read_text().splitlines()
    lines[21] += "  # verify-reducer: ignore[R201] I know"
    path = tmp_path / "r201.py"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = cli(capsys, "check", str(path))
    assert code == 1 and "error[R201]" in err
    assert "warning[R111]" in err and "R201 on line 22 is an error" in err


def _project(tmp_path, table: str):
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'k'\n\n{table}")
    (tmp_path / "kernels").mkdir()
    return _histogram(tmp_path / "kernels")


def test_the_project_ignores_a_code_and_the_report_says_where(tmp_path, capsys,
                                                              monkeypatch):
    path = _project(tmp_path, '[tool.verify-reducer]\nignore = ["R400"]\nseed = 3\n')
    monkeypatch.chdir(tmp_path / "kernels")              # found from a folder below
    code, out, _ = cli(capsys, "check", str(path), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["seed"] == 3
    [accepted] = doc["suppressed"]
    assert accepted["code"] == "R400" and "pyproject.toml [tool.verify-reducer] ignore" \
        in accepted["suppressed"]
    code, out, _ = cli(capsys, "check", str(path), "--json", "--seed", "5")
    assert json.loads(out)["seed"] == 5                   # the command line wins


def test_per_path_settings_apply_to_their_paths_only(tmp_path, capsys, monkeypatch):
    path = _project(tmp_path, '[tool.verify-reducer]\n[[tool.verify-reducer.per-path]]\n'
                              'paths = ["kernels/*.py"]\nignore = ["R400"]\n')
    other = _histogram(tmp_path)                          # outside kernels/
    monkeypatch.chdir(tmp_path)
    docs = json.loads(cli(capsys, "check", str(path), str(other), "--json")[1])["programs"]
    assert [len(d["suppressed"]) for d in docs] == [1, 0]
    assert "per-path[0] ignore" in docs[0]["suppressed"][0]["by"]


@pytest.mark.parametrize("table, message", [
    ('[tool.verify-reducer]\nignor = ["R400"]\n', "unknown key(s) ignor"),
    ('[tool.verify-reducer]\nignore = ["R4000"]\n', "unknown code(s) R4000"),
    ('[tool.verify-reducer]\nseed = "three"\n', "seed: 'three' is not what --seed takes"),
    ('[tool.verify-reducer]\nblocks = "some"\n', "expected all or a count"),
    ('[tool.verify-reducer\n', "cannot be read as TOML"),
])
def test_a_bad_setting_is_a_usage_error_naming_it(tmp_path, capsys, monkeypatch, table,
                                                  message):
    path = _project(tmp_path, table)
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "check", str(path))
    assert code == 2 and message in err and out == ""

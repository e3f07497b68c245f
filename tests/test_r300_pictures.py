"""Every R300 says where its picture is or why it has none: each program under
tests/programs/{layout,invalid} whose `# expect:` lines name an R300 is checked with
`check --json-file --html` and drawn with `emit --what svg`. Each R300 carries a
counterexample (drawn in the report and as an SVG file) or a one-sentence `no_picture`
reason (shown in the report under the diagnostic), never neither and never both."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("jinja2")
pytest.importorskip("drawsvg")

from test_html_report import _parse

from verify_reducer.verify.cli.commands import main
from verify_reducer.verify.oracle.expect import parse_expectation

ROOT = Path(__file__).resolve().parent.parent
R300_PROGRAMS = sorted(
    p for folder in ("layout", "invalid")
    for p in (ROOT / "tests" / "programs" / folder).glob("*.py")
    if any(code == "R300" for code, _, _ in parse_expectation(p.read_text(), str(p)).errors))
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """One `check --html` over every R300 program, with its JSON."""
    folder = tmp_path_factory.mktemp("r300")
    html, doc = folder / "r300.html", folder / "r300.json"
    code = main(["check", "-q", *map(str, R300_PROGRAMS), "--html", str(html),
                 "--json-file", str(doc)])
    assert code == 1
    programs = {p["program"]: p for p in json.loads(doc.read_text())["programs"]}
    return programs, _parse(html.read_text())


def _r300s(program: dict) -> list[dict]:
    return [d for d in program["diagnostics"] if d["code"] == "R300"]


def test_the_walk_covers_every_kind_of_r300_program():
    names = {p.stem for p in R300_PROGRAMS}
    # a drawn element-level mismatch, one without a cell to mark, and the R300s
    # that are no element at all
    assert {"r300_stale_replica", "r300_index_no_layout_places",
            "r300_warp_groups_not_contiguous",
            "r300_reduce_in_another_warp_group"} <= names


@pytest.mark.parametrize("path", R300_PROGRAMS, ids=[p.stem for p in R300_PROGRAMS])
def test_every_r300_has_a_picture_or_says_why_not(path, checked, tmp_path, capsys):
    programs, sections = checked
    program, section = programs[str(path)], sections[str(path)]
    r300s = _r300s(program)
    assert r300s, path.name
    for d in r300s:
        has_picture = d["counterexample"] is not None
        assert has_picture != bool(d["no_picture"]), d["message"]
        if not has_picture:
            # one sentence, not a placeholder
            assert d["no_picture"].strip() and d["no_picture"].count(". ") == 0
    # the report: each reason under its diagnostic, each counterexample a figure with cells
    unpictured = sorted(("R300", str(d["line"])) for d in r300s if d["no_picture"])
    assert sorted(n for n in section["no_picture"] if n[0] == "R300") == unpictured
    drawn = [d for d in r300s if d["counterexample"]]
    figures = [f for name, f in section["figures"].items() if name.startswith("R")]
    assert len(figures) == len(drawn), path.name
    assert all(f["svg"] and f["cells"] > 0 for f in figures)
    # `emit --what svg`: one valid SVG per drawn R300, none for those that say why not
    folder = tmp_path / "svg"
    assert main(["emit", str(path), "--what", "svg", "--out", f"{folder}/"]) == 1
    assert "R300" in capsys.readouterr().err
    pictures = sorted(folder.iterdir()) if folder.exists() else []
    assert len(pictures) == len(drawn), path.name
    for picture in pictures:
        root = ET.fromstring(picture.read_bytes())
        assert root.tag == f"{SVG}svg"
        assert any(r.get("class") == "cell" for r in root.iter(f"{SVG}rect"))

"""Counterexamples drawn where no plan grid holds them: an R300 of layout inference
(found before any plan exists) on the two layouts it carries — the fragment as placed
and the loop's demand — with the element, the iteration and the thread in question
marked, through `emit --what svg` on the rejected program; R400 refusals on the grids
their evidence names, and the refusals without evidence saying why they have no
picture."""
from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("drawsvg")

from verify_reducer.codegen.layout import infer_layouts
from verify_reducer.codegen.plan_svg import plan_pictures
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.verify.cli.commands import main
from verify_reducer.verify.oracle import pipeline

ROOT = Path(__file__).resolve().parent.parent
LAYOUT = sorted((ROOT / "tests" / "programs" / "layout").glob("r300_*.py"))
SVG = "{http://www.w3.org/2000/svg}"


def _r300s(path: Path):
    loaded = pipeline.load(str(path))
    with pytest.raises(DiagnosticError) as caught:
        infer_layouts(loaded.func)
    return [d for d in caught.value.diagnostics if d.code == "R300"]


def _grids(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "layout"]


def _rects(group: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in group.iter(f"{SVG}rect") if e.get("class") == cls]


def _cells_of(layout, index: tuple[int, ...]) -> set[tuple[int, int]]:
    """Every (absolute thread, slot) the layout puts the logical index in."""
    ix = tuple(np.array([i]) for i in index)
    slot = int(layout.slots_of(ix)[0])
    return {(int(t), slot) for t in layout.threads_of(ix, absolute=True)[:, 0]}


def _check_view(grid: ET.Element, view, rows: tuple[int, int]) -> None:
    """One cell per (thread, slot) over the shared rows, each holding what the carried
    layout puts there; the marked cells are the element's (or iteration's) cells, and
    the thread in question's row is marked in its role."""
    layout = view.layout
    first, count = rows
    assert (int(grid.get("data-offset")), int(grid.get("data-threads"))) == rows
    cells = _rects(grid, "cell")
    assert len(cells) == count * layout.slots_per_thread
    pairs = {(int(c.get("data-t")), int(c.get("data-s"))) for c in cells}
    assert pairs == {(t, s) for t in range(first, first + count)
                     for s in range(layout.slots_per_thread)}
    held = {(int(c.get("data-t")), int(c.get("data-s"))) for c in cells
            if c.get("data-i")}
    assert {t for t, _ in held} <= set(range(layout.offset, layout.offset + layout.count))
    marks: dict[str, set] = {}
    for m in _rects(grid, "mark"):
        marks.setdefault(m.get("data-role"), set()).add(
            (int(m.get("data-t")), int(m.get("data-s"))))
    [(index, role)] = view.elements
    assert marks == {role: _cells_of(layout, index)}
    [(thread, thread_role)] = view.threads
    rows_marked = [(int(r.get("data-t")), r.get("data-role"))
                   for r in _rects(grid, "mark-row")]
    assert rows_marked == [(thread, thread_role)]


@pytest.mark.parametrize("path", LAYOUT, ids=[p.stem for p in LAYOUT])
def test_every_layout_r300_is_drawn_on_both_layouts_or_says_why_not(path, tmp_path, capsys):
    diagnostics = _r300s(path)
    folder = tmp_path / "svg"
    assert main(["emit", str(path), "--what", "svg", "--out", f"{folder}/"]) == 1
    err = capsys.readouterr().err
    assert "R300" in err                              # the rejection is reported as ever
    drawn = sorted(folder.iterdir()) if folder.exists() else []
    carried = [d for d in diagnostics if d.counterexample is not None]
    assert len(drawn) == len(carried)
    for d in diagnostics:
        assert (d.counterexample is None) == (d.no_picture is not None), d.message
    for picture, d in zip(drawn, carried):
        cx = d.counterexample
        fragment, loop = cx.views()
        assert fragment.grid[0] == "fragment" and loop.grid[0] == "loop"
        assert fragment.layout is not None and loop.layout is not None
        first = min(fragment.layout.offset, loop.layout.offset)
        end = max(v.layout.offset + v.layout.count for v in (fragment, loop))
        root = ET.fromstring(picture.read_bytes())
        frag_grid, loop_grid = _grids(root)
        _check_view(frag_grid, fragment, (first, end - first))
        _check_view(loop_grid, loop, (first, end - first))
        [(element, _)] = fragment.elements
        [(iteration, _)] = loop.elements
        [(thread, role)] = fragment.threads
        holders = {t for t, _ in _cells_of(fragment.layout, element)}
        runners = {t for t, _ in _cells_of(loop.layout, iteration)}
        if role == "unheld":     # runs the iteration, does not hold the element
            assert thread in runners and thread not in holders
        else:                    # holds the element, does not run the iteration writing it
            assert role == "stale" and thread in holders and thread not in runners
        assert [g for g in root.iter(f"{SVG}g") if g.get("class") == "legend"]


def test_the_stale_replica_is_marked_on_the_holder_that_does_not_write():
    [d] = _r300s(ROOT / "tests" / "programs" / "layout" / "r300_stale_replica.py")
    cx = d.counterexample
    assert cx.threads == ((0, "stale"),) and cx.elements == (((0, 1), "holder"),)
    assert cx.also[0].elements == (((0, 1), "iteration"),)


def test_the_r300_svg_prints_when_no_out_is_given_and_json_carries_the_layouts(capsys):
    path = str(ROOT / "tests" / "programs" / "layout" / "r300_warp_groups_split_a_fragment.py")
    assert main(["emit", path, "--what", "svg"]) == 1
    out = capsys.readouterr().out
    root = ET.fromstring(out.strip().encode())
    assert len(_grids(root)) == 2
    assert main(["emit", path, "--what", "svg", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    [d] = doc["diagnostics"]
    cx = d["counterexample"]
    assert cx["layout"]["count"] == 128 and cx["also"][0]["grid"]["kind"] == "loop"
    assert cx["also"][0]["layout"]["offset"] == 128 and d["no_picture"] is None


def test_an_r300_without_an_element_draws_nothing_and_says_why(tmp_path, capsys):
    path = ROOT / "tests" / "programs" / "layout" / "r300_index_no_layout_places.py"
    [d] = _r300s(path)
    assert d.counterexample is None and "not an affine function" in d.no_picture
    assert main(["emit", str(path), "--what", "svg", "--out", str(tmp_path / "x.svg")]) == 1
    assert not (tmp_path / "x.svg").exists()


def _r400(path: Path):
    plan = pipeline.make_plan(pipeline.load(str(path)), "auto")
    [note] = [n for rp in plan.reducers for n in rp.notes if n.code == "R400"]
    return plan, note


def test_an_in_place_destination_refusal_is_drawn_on_the_candidate_s_storage():
    plan, note = _r400(ROOT / "tests" / "programs" / "valid" /
                       "in_place_fast_keeps_every_output.py")
    cx = note.counterexample
    assert cx.grid == ("storage", "acc0") and cx.layout is not None and note.no_picture is None
    [(thread, role)] = cx.threads
    [group] = cx.groups
    assert role == "unheld" and thread in group
    [picture] = [p for p in plan_pictures(plan, [note]) if p.name.startswith("R400")]
    root = ET.fromstring(picture.svg.encode())
    [grid] = _grids(root)
    [(index, _)] = cx.elements
    marked = {(int(m.get("data-t")), int(m.get("data-s")))
              for m in _rects(grid, "mark")}
    assert marked == _cells_of(cx.layout, index)
    assert thread not in {t for t, _ in marked}       # its group does not reduce it
    assert {int(e.get("data-t")) for e in _rects(grid, "group")} == set(group)


def test_a_refusal_without_evidence_says_why_it_has_no_picture():
    plan, note = _r400(ROOT / "tests" / "programs" / "valid" / "gpu_f16_sum_flat_loop.py")
    assert note.counterexample is None
    assert "not decided" in note.no_picture
    assert not [p for p in plan_pictures(plan, [note]) if p.name.startswith("R400")]
    assert note.to_json()["no_picture"] == note.no_picture


def test_a_spent_budget_refusal_says_why_it_has_no_picture(monkeypatch):
    from verify_reducer.codegen.plan_sites import gather_reducers
    from verify_reducer.codegen.proofs import fast
    loaded = pipeline.load(str(ROOT / "examples" / "two_sites_8_16.py"))
    [sites] = gather_reducers(loaded.func, infer_layouts(loaded.func))
    search = fast.search_fast(sites, budget_s=0.0)
    assert search.budget_spent and search.refusal_evidence is None
    assert "budget ran out" in search.refusal_unpictured


def test_an_omission_across_two_sites_draws_the_present_iteration_on_the_other_loop():
    """two_sites_8_16 under width 8: an iteration of the site at line 34 is missing
    from a group the site at line 28 puts a contribution to the same output in; the
    picture has the missing iteration on line 34's loop and the present one on line
    28's, the same group outlined on both."""
    from verify_reducer.codegen.plan_sites import gather_reducers
    from verify_reducer.codegen.proofs.fast_obligations import omission_query
    from verify_reducer.codegen.proofs.obligation import solve
    from verify_reducer.codegen.proofs.partition import Partition
    from verify_reducer.codegen.proofs.signature import update_sites
    loaded = pipeline.load(str(ROOT / "examples" / "two_sites_8_16.py"))
    [sites_of] = gather_reducers(loaded.func, infer_layouts(loaded.func))
    sites = update_sites(sites_of.updates, sites_of.layouts, sites_of.participants)
    first, second = sites
    part = Partition(8, 1, sites_of.participants)
    result = solve(omission_query(second, first, part))
    assert not result.proved
    cx = result.evidence
    [(missing, role)] = cx.elements
    [other] = cx.also
    [(present, other_role)] = other.elements
    assert (role, other_role) == ("missing", "present")
    assert cx.grid[2] == second.line and other.grid[2] == first.line
    assert cx.groups == other.groups
    plan = pipeline.make_plan(loaded, "auto")
    note = dataclasses.replace(plan.reducers[0].notes[0], counterexample=cx)
    [picture] = [p for p in plan_pictures(plan, [note]) if p.name.startswith("R400")]
    root = ET.fromstring(picture.svg.encode())
    grids = _grids(root)
    assert len(grids) == 2
    for grid, site, (index, want) in zip(grids, (second, first),
                                         ((missing, "missing"), (present, "present"))):
        marked = {(int(m.get("data-t")), int(m.get("data-s")))
                  for m in _rects(grid, "mark") if m.get("data-role") == want}
        assert marked == _cells_of(site.layout, index)
        group = {int(e.get("data-t")) for e in _rects(grid, "group")}
        assert group == set(cx.groups[0]) & set(range(site.layout.offset,
                                                      site.layout.offset + site.layout.count))
    missing_threads = {t for t, _ in _cells_of(second.layout, missing)}
    assert not missing_threads & set(cx.groups[0])


def test_the_carried_counterexamples_validate_against_the_schema(capsys):
    """The R300's layouts (emit's rejection document) and the R400 on a candidate's
    storage (check's document) are valid JSON of verify_reducer/schemas."""
    from test_cli_conventions import assert_valid
    layout = ROOT / "tests" / "programs" / "layout"
    for name in ("r300_stale_replica.py", "r300_index_no_layout_places.py"):
        assert main(["emit", str(layout / name), "--what", "svg", "--json"]) == 1
        assert_valid(json.loads(capsys.readouterr().out))
    program = ROOT / "tests" / "programs" / "valid" / "in_place_fast_keeps_every_output.py"
    assert main(["check", str(program), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert_valid(doc)
    [note] = [n for e in doc["epochs"] for n in e["notes"] if n["code"] == "R400"]
    assert note["counterexample"]["layout"] is not None


def test_a_plan_with_nothing_to_draw_is_told_not_a_crash(capsys, tmp_path):
    """Regression (issue 27's helper found it): a kernel with no fragment, reducer or
    counterexample (atomics into global memory only) crashed `emit --what svg` with
    max() of an empty sequence; it is a usage error saying why now, in both forms."""
    pytest.importorskip("drawsvg")
    from verify_reducer.verify.cli.commands import main
    path = str(ROOT / "tests" / "programs" / "valid" / "atomic_add_half_rounds_each_step.py")
    for extra in ([], ["--out", str(tmp_path) + "/"]):
        assert main(["emit", "--what", "svg", path, *extra]) == 2
        err = capsys.readouterr().err
        assert "the plan has nothing to draw" in err and "internal error" not in err

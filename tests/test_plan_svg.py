"""Layouts drawn (codegen.plan_svg, `emit --what svg`): every example's fragments, reducer
storages and update loops give SVG documents that parse as XML, with one cell per
(thread, slot), each holding the element the layout puts there, and a legend."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("drawsvg")

from verify_reducer.codegen.plan_svg import (MAX_CELLS, PictureTooLarge, plan_pictures,
                                             plan_svg, stacked_svg)
from verify_reducer.spec.layout import Layout
from verify_reducer.spec.indexexpr import Var
from verify_reducer.verify import pipeline
from verify_reducer.verify.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
SVG = "{http://www.w3.org/2000/svg}"


def _plan(path: Path, planner: str = "canonical"):
    return pipeline.make_plan(pipeline.load(str(path)), planner)


def _root(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode())


def _cells(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}rect") if e.get("class") == "cell"]


def _layouts_of(plan) -> list[Layout]:
    out = list(plan.layouts.fragments.values())
    for rp in plan.reducers:
        out.append(rp.storage)
        out += [site.loop for site in rp.sites]
    return out


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_draws_one_cell_per_thread_and_slot(path):
    try:
        plan = _plan(path)
    except Exception as exc:                 # an example that is rejected on purpose
        pytest.skip(f"{path.name} has no plan: {exc}")
    pictures = plan_pictures(plan)
    layouts = _layouts_of(plan)
    assert len(pictures) == len(layouts) and len({p.name for p in pictures}) == len(pictures)
    for picture, layout in zip(pictures, layouts):
        root = _root(picture.svg)
        cells = _cells(root)
        assert len(cells) == layout.count * layout.slots_per_thread, picture.name
        pairs = {(int(c.get("data-thread")), int(c.get("data-slot"))) for c in cells}
        assert len(pairs) == len(cells)
        assert [g for g in root.iter(f"{SVG}g") if g.get("class") == "legend"], picture.name


def test_a_cell_holds_the_element_the_layout_puts_there():
    layout = Layout((4, 8), ("i", "j"), Var("j") % 4 + Var("i") % 2 * 4,
                    Var("j") // 4 + Var("i") // 2 * 2, 8)
    root = _root(stacked_svg([(layout, "t", None)]))
    held = {(int(c.get("data-thread")), int(c.get("data-slot"))): c.get("data-index")
            for c in _cells(root)}
    threads, slots = layout.threads_of()[0], layout.slots_of()
    for n, (i, j) in enumerate(np.ndindex(4, 8)):
        assert held[(int(threads[n]), int(slots[n]))] == f"{i},{j}"


def test_replicas_that_do_not_contribute_are_faded():
    plan = _plan(ROOT / "examples" / "minimal_rfc.py", "canonical")
    [site] = plan.reducers[0].sites
    assert site.guard_replica == 0
    picture = plan_pictures(plan)[-1]
    assert picture.name.startswith("update-")
    cells = _cells(_root(picture.svg))
    faded = [c for c in cells if c.get("fill-opacity") == "0.35"]
    assert faded and all(c.get("data-replica") != "0" for c in faded)
    assert all(c.get("fill-opacity") == "1" for c in cells if c.get("data-replica") == "0")


def test_too_many_cells_is_refused():
    layout = Layout((MAX_CELLS * 2,), ("i",), Var("i") % 1024, Var("i") // 1024, 1024)
    with pytest.raises(PictureTooLarge, match="cells"):
        stacked_svg([(layout, "big", None)])


def test_emit_svg_to_a_folder_and_to_a_file(tmp_path, capsys):
    program = str(ROOT / "examples" / "minimal_rfc.py")
    folder = tmp_path / "pictures"
    assert main(["emit", program, "--what", "svg", "--out", f"{folder}/"]) == 0
    files = sorted(p.name for p in folder.iterdir())
    assert files == [f"minimal_rfc-main-{n}.svg" for n in
                     ("fragment-result", "fragment-x_frag", "storage-total",
                      "update-total-line23")]
    for name in files:
        _root((folder / name).read_text())
    one = tmp_path / "all.svg"
    assert main(["emit", program, "--what", "svg", "--out", str(one)]) == 0
    root = _root(one.read_text())
    assert len([g for g in root.iter(f"{SVG}g") if g.get("class") == "layout"]) == 4
    capsys.readouterr()
    assert main(["emit", program, "--what", "svg"]) == 0
    assert _root(capsys.readouterr().out.strip()) is not None


def test_emit_svg_to_an_unwritable_path_is_a_usage_error(tmp_path, capsys):
    program = str(ROOT / "examples" / "minimal_rfc.py")
    code = main(["emit", program, "--what", "svg", "--out",
                 str(tmp_path / "missing" / "x.svg")])
    assert code == 2
    assert "cannot write" in capsys.readouterr().err


def test_the_whole_plan_in_one_document_parses():
    plan = _plan(ROOT / "examples" / "gemv_pipelined.py", "auto")
    root = _root(plan_svg(plan))
    expected = sum(lay.count * lay.slots_per_thread for lay in _layouts_of(plan))
    assert len(_cells(root)) == expected

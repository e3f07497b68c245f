"""`check --html` in a real browser: Debian's headless Chromium loads the report of every
example (and of a rejected program) and the DOM it renders shows every source line,
every diagnostic and every picture as an SVG; a screenshot is not blank. Skipped only
where chromium is not installed (`.ci/run` installs it). Every rejected program under
tests/programs/{invalid,layout,family} (each whose `# expect:` names an error) makes one
more report, read with html.parser."""
from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jinja2")
pytest.importorskip("drawsvg")

from verify_reducer.verify.cli.commands import main
from verify_reducer.verify.oracle.expect import parse_expectation, unmatched

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
# the programs there whose `# expect:` names an error (family/ also holds regressions
# that verify)
REJECTED_PROGRAMS = sorted(p for folder in ("invalid", "layout", "family")
                           for p in (ROOT / "tests" / "programs" / folder).glob("*.py")
                           if not parse_expectation(p.read_text(), str(p)).ok)
REJECTED = ROOT / "tests" / "programs" / "invalid" / "r201_update_after_finalize.py"
CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                    "(apt-get install chromium; .ci/run does it as root)")


class _Report(HTMLParser):
    """Per program section: its source lines, its diagnostics (code, line) and, per
    figure, whether an <svg> with grid cells is inside it."""

    def __init__(self):
        super().__init__()
        self.sections: dict[str, dict] = {}
        self.current: dict | None = None
        self.figure: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "")
        if tag == "section" and "program" in cls.split():
            self.current = self.sections.setdefault(
                a["data-program"], {"lines": [], "diagnostics": [], "figures": {},
                                    "placed": [], "no_picture": []})
        if self.current is None:
            return
        if tag == "div" and cls == "line":
            self.current["lines"].append(int(a["data-line"]))
        elif tag == "div" and "diagnostic" in cls.split():
            self.current["diagnostics"].append((a["data-code"], a["data-line"]))
            # the source line the diagnostic's box follows
            lines = self.current["lines"]
            self.current["placed"].append((a["data-code"], lines[-1] if lines else None))
        elif tag == "p" and cls == "no-picture":
            self.current["no_picture"].append((a["data-code"], a["data-line"]))
        elif tag == "figure":
            self.figure = a["data-picture"]
            self.current["figures"][self.figure] = {"svg": False, "cells": 0}
        elif tag == "svg" and self.figure is not None:
            self.current["figures"][self.figure]["svg"] = True
        elif tag == "rect" and self.figure is not None and "cell" in cls.split():
            self.current["figures"][self.figure]["cells"] += 1

    def handle_endtag(self, tag):
        if tag == "figure":
            self.figure = None
        elif tag == "section":
            self.current = None


def _parse(text: str) -> dict[str, dict]:
    parser = _Report()
    parser.feed(text)
    return parser.sections


def _chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--no-first-run", *args], capture_output=True, text=True,
                          timeout=120, check=True)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """One `check --html` of every example and a rejected program, with its JSON."""
    folder = tmp_path_factory.mktemp("report")
    html, doc = folder / "report.html", folder / "report.json"
    programs = [str(p) for p in EXAMPLES] + [str(REJECTED)]
    code = main(["check", "-q", *programs, "--html", str(html), "--json-file", str(doc)])
    assert code == 1                               # the rejected program
    return html, json.loads(doc.read_text())


def test_the_report_holds_every_program_line_diagnostic_and_picture(report):
    html, doc = report
    sections = _parse(html.read_text())
    assert list(sections) == [p["program"] for p in doc["programs"]]
    for program in doc["programs"]:
        section = sections[program["program"]]
        source = Path(program["program"]).read_text().splitlines()
        assert section["lines"] == list(range(1, len(source) + 1))
        expected = [(d["code"], str(d["line"])) for d in program["diagnostics"]
                    + program["violations"] + [n for e in program["epochs"]
                                               for n in e["notes"]]]
        assert sorted(section["diagnostics"]) == sorted(expected)
        if program["verdict"] == "verified":
            assert section["figures"]
    assert "http://" not in html.read_text().replace("http://www.w3.org/", "")


def test_every_rejected_program_gets_its_section_with_each_diagnostic_at_its_line(tmp_path):
    """One `check --html` of every program under tests/programs/{invalid,layout,family}
    (read with html.parser, not a browser per program): no crash, exit 1 (each program
    rejected as its `# expect:` lines say), every source line, each diagnostic boxed
    under the line it names, each counterexample drawn with one cell per (thread,
    slot), and a diagnostic that carries no counterexample saying why."""
    html, doc = tmp_path / "rejected.html", tmp_path / "rejected.json"
    code = main(["check", "-q", *map(str, REJECTED_PROGRAMS), "--html", str(html),
                 "--json-file", str(doc)])
    assert code == 1
    programs = json.loads(doc.read_text())["programs"]
    sections = _parse(html.read_text())
    assert list(sections) == [str(p) for p in REJECTED_PROGRAMS]
    for path, program in zip(REJECTED_PROGRAMS, programs):
        section = sections[str(path)]
        source = path.read_text()
        assert program["exit_code"] == 1, path.name
        expected = parse_expectation(source, str(path)).errors
        got = [(d["code"], d["line"], d["col"]) for d in program["diagnostics"]]
        assert unmatched(expected, got) == ([], []), path.name
        assert section["lines"] == list(range(1, len(source.splitlines()) + 1)), path.name
        shown = program["diagnostics"] + program["violations"] + \
            [n for e in program["epochs"] for n in e["notes"]]
        placed = sorted((d["code"], d["line"]) for d in shown
                        if d["line"] is not None and d["line"] <= len(section["lines"]))
        assert sorted(section["placed"]) == placed, path.name
        drawn = [d for d in shown if d["counterexample"]]
        counterexamples = [n for n in section["figures"] if n.startswith("R")]
        assert len(counterexamples) == len(drawn), path.name
        for figure in section["figures"].values():
            assert figure["svg"] and figure["cells"] > 0, path.name
        unpictured = sorted((d["code"], str(d["line"])) for d in shown if d["no_picture"])
        assert sorted(section["no_picture"]) == unpictured, path.name
    layout = [sections[str(p)] for p in REJECTED_PROGRAMS if p.parent.name == "layout"]
    assert sum(len(s["figures"]) for s in layout) == 6          # the R300 pictures
    # the index nothing places, the warp groups that are no range, the T.reduce_sum on
    # threads that hold none of its source
    assert sum(len(s["no_picture"]) for s in layout) == 3


@needs_chromium
def test_chromium_renders_every_line_diagnostic_and_picture(report):
    html, doc = report
    static = _parse(html.read_text())
    rendered = _parse(_chromium("--dump-dom", html.as_uri()).stdout)
    assert rendered.keys() == static.keys()
    for program, section in static.items():
        shown = rendered[program]
        assert shown["lines"] == section["lines"], program
        assert sorted(shown["diagnostics"]) == sorted(section["diagnostics"]), program
        assert shown["figures"].keys() == section["figures"].keys(), program
        for name, figure in shown["figures"].items():
            assert figure["svg"] and figure["cells"] > 0, (program, name)
    [two_sites] = [s for p, s in rendered.items() if p.endswith("two_sites_8_16.py")]
    assert ("R400", "34") in two_sites["diagnostics"]
    assert any(name.startswith("R400") for name in two_sites["figures"])
    [rejected] = [s for p, s in rendered.items() if p.endswith(REJECTED.name)]
    assert any(code == "R201" for code, _ in rejected["diagnostics"])


@needs_chromium
def test_a_screenshot_of_the_report_is_not_blank(tmp_path):
    html, png = tmp_path / "two.html", tmp_path / "two.png"
    assert main(["check", "-q", str(ROOT / "examples" / "two_sites_8_16.py"),
                 "--html", str(html)]) == 0
    _chromium(f"--screenshot={png}", "--window-size=800,600", html.as_uri())
    pixels = read_png(png.read_bytes())
    assert pixels.shape[:2] == (600, 800)
    grey = pixels[..., :3].astype(float).mean(axis=2)
    assert grey.std() > 10                         # text, tables and colour, not one tone
    assert len(np.unique(pixels[..., :3].reshape(-1, 3), axis=0)) > 16


def read_png(data: bytes) -> np.ndarray:
    """An 8-bit RGB or RGBA PNG as [height, width, channels] (the five row filters
    undone): enough for Chromium's screenshots, without an imaging library."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    bpp = 3 if colour == 2 else 4
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, -1)
    out = np.zeros((height, width * bpp), dtype=np.int64)
    previous = np.zeros(width * bpp, dtype=np.int64)
    for y in range(height):
        kind, row = raw[y, 0], raw[y, 1:].astype(np.int64)
        if kind == 0:
            line = row
        elif kind == 1:
            line = np.cumsum(row.reshape(-1, bpp), axis=0).reshape(-1) % 256
        elif kind == 2:
            line = (row + previous) % 256
        else:
            line = row.copy()
            for x in range(len(line)):
                left = line[x - bpp] if x >= bpp else 0
                up, corner = previous[x], previous[x - bpp] if x >= bpp else 0
                if kind == 3:
                    guess = (left + up) // 2
                else:
                    p = left + up - corner
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                    guess = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[x] = (line[x] + guess) % 256
        out[y] = previous = line
    return out.reshape(height, width, bpp).astype(np.uint8)


def test_an_unwritable_report_path_is_a_usage_error(tmp_path, capsys):
    program = str(ROOT / "examples" / "minimal_rfc.py")
    code = main(["check", program, "--html", str(tmp_path / "missing" / "r.html")])
    assert code == 2
    assert "--html" in capsys.readouterr().err
    assert main(["check", program, "--html", str(tmp_path)]) == 2     # a directory


@pytest.mark.parametrize("module, extra", [("jinja2", "report"), ("drawsvg", "pictures")])
def test_a_missing_library_is_a_usage_error_naming_the_extra(tmp_path, capsys, monkeypatch,
                                                            module, extra):
    import sys
    monkeypatch.setitem(sys.modules, module, None)          # import fails
    code = main(["check", str(ROOT / "examples" / "minimal_rfc.py"),
                 "--html", str(tmp_path / "r.html")])
    assert code == 2
    assert f"verify-reducer[{extra}]" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()

"""`verify-reducer check --html REPORT.html`: one self-contained HTML file (no network, no
external assets, every picture an inline SVG) rendered with Jinja2 from
verify/cli/templates/report.html.j2.

Each program checked gets a section built from the same structured result its `--json`
document is (verify.cli.json_doc.check_json), never from the text report: the source with
each diagnostic at its line, each reducer's plan (codegen.plan_text) with its proofs and
their timings, the pictures (codegen.plan_svg: grids, finalizes, counterexamples) and the
comparisons of every simulated plan with the interpreter. Several programs make one
report, a section each, in the order they were checked, with the verdicts at the top.
Jinja2 (extra `report`) and drawsvg (extra `pictures`) are needed: without either, or
with a path that cannot be written (verify.cli.outputs: a link, the program itself, a
folder that takes no new file), the command exits 2 before any program is checked."""
from __future__ import annotations

import time
from pathlib import Path

from verify_reducer import __version__
from verify_reducer.codegen.plan_text import format_plan

from verify_reducer.verify.cli import json_doc as cli_json
from verify_reducer.verify.cli import outputs
from verify_reducer.verify.cli.batch import report_usage
from verify_reducer.verify.cli.svg import carried_counterexamples, require_drawsvg
from verify_reducer.verify.cli.text import blocks_text
from verify_reducer.verify.oracle.pipeline import EXIT_USAGE, CheckReport, UsageError, plan_notes

TEMPLATES = Path(__file__).resolve().parent / "templates"


def with_report(args, run) -> int:
    """run() (every program's check, each adding its section to args.html_sections),
    then the report written to args.html; exit 2 when it cannot be."""
    try:
        _require()
        outputs.check_file("--html", args.html, outputs.run_inputs(args))
    except UsageError as exc:
        return report_usage(args, str(exc))
    args.html_sections = []
    code = run()
    try:
        write(args.html, args.html_sections, code, outputs.run_inputs(args))
    except UsageError as exc:
        report_usage(args, str(exc))
        return EXIT_USAGE
    if not args.json and not args.ui.quiet:
        args.ui.note(f"wrote {args.html}")
    return code


def _require() -> None:
    try:
        import jinja2  # noqa: F401
    except ImportError:
        raise UsageError("--html renders with Jinja2, which is not installed: "
                         "pip install 'verify-reducer[report]'") from None
    require_drawsvg("--html")


def section(program: str, report: CheckReport, source: str, seconds: float,
            doc: dict | None = None) -> dict:
    """One program's part of the report: its JSON document (doc, when --json has built
    it already) and what the document does not carry (the source, the plan text, the
    pictures)."""
    if doc is None:
        doc = cli_json.check_json(program, report)
    diagnostics = doc["diagnostics"] + doc["violations"] + \
        [n for e in doc["epochs"] for n in e["notes"]]
    by_line: dict[int, list[dict]] = {}
    for d in diagnostics:
        if d["line"] is not None:
            by_line.setdefault(d["line"], []).append(d)
    lines = [{"number": n, "text": text, "diagnostics": by_line.get(n, [])}
             for n, text in enumerate(source.splitlines(), 1)]
    beyond = [d for d in diagnostics if d["line"] is None or d["line"] > len(lines)]
    plan = report.plans.get("auto")
    return {"program": program, "doc": doc, "lines": lines, "unplaced": beyond,
            "diagnostic_count": len(diagnostics), "seconds": seconds,
            "plan_text": format_plan(plan) if plan is not None else None,
            # the blocks that ran, worded as the text report words them
            "blocks_text": [line.strip() for line in blocks_text(report)]
            if doc.get("blocks") else [],
            "pictures": pictures(report),
            "unpictured": [d for d in diagnostics if d.get("no_picture")]}


def pictures(report: CheckReport) -> list[dict]:
    """The counterexamples a rejection carries with their layouts (R300 of layout
    inference, before any plan exists); the auto plan's pictures with the
    counterexamples of its notes and its run's violations; the counterexamples of every
    other simulated plan on its own grids."""
    from verify_reducer.codegen.counterexample_svg import counterexample_panels
    from verify_reducer.codegen.plan_svg import (PictureTooLarge, counterexample_pictures,
                                                 plan_pictures, stack)
    out = []
    # a program rejected before any plan exists: the counterexamples its R300s carry
    carried = carried_counterexamples(report.diagnostics)
    try:
        out += [{"name": p.name, "title": p.title, "svg": inline(p.svg), "refused": None}
                for p in counterexample_pictures(None, carried)]
    except PictureTooLarge as exc:
        out.append({"name": "rejection", "title": "the rejection's counterexamples",
                    "svg": None, "refused": str(exc)})
    violations = {run.plan: run.violations for run in report.runs}
    for name, plan in report.plans.items():
        if name == "auto":
            try:
                drawn = plan_pictures(plan, plan_notes(plan) + violations.get(name, []))
            except PictureTooLarge as exc:
                out.append({"name": f"{name}", "title": f"plan {name}", "svg": None,
                            "refused": str(exc)})
                continue
            out += [{"name": p.name, "title": p.title, "svg": inline(p.svg),
                     "refused": None} for p in drawn]
            continue
        for n, d in enumerate(v for v in violations.get(name, []) if v.counterexample):
            try:
                panels = counterexample_panels(plan, d.code, d.counterexample)
                svg = inline(stack(panels)) if panels else None
            except PictureTooLarge as exc:
                out.append({"name": f"{name}-{d.code}-{n}", "title": d.code, "svg": None,
                            "refused": str(exc)})
                continue
            if svg is not None:
                out.append({"name": f"{name}-{d.code}-{n}", "refused": None, "svg": svg,
                            "title": f"{d.code} (plan {name}): {d.counterexample.caption}"})
    return out


def inline(svg: str) -> str:
    """An SVG document as an element of the HTML (its XML declaration dropped)."""
    if svg.startswith("<?xml"):
        svg = svg[svg.index("?>") + 2:]
    return svg.strip()


def add_section(args, report: CheckReport, source: str, start: float,
                doc: dict | None = None) -> None:
    if getattr(args, "html_sections", None) is not None:
        args.html_sections.append(section(args.program, report, source,
                                          time.perf_counter() - start, doc))


def render(sections: list[dict], exit_code: int) -> str:
    import jinja2
    from markupsafe import Markup
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True)
    for s in sections:
        for p in s["pictures"]:
            if p["svg"] is not None:
                p["svg"] = Markup(p["svg"])        # our own drawsvg output
    return env.get_template("report.html.j2").render(
        sections=sections, exit_code=exit_code, version=__version__,
        verdict=lambda code: cli_json.verdict("check", code))


def write(path: str, sections: list[dict], exit_code: int,
          protected: tuple[str, ...] = ()) -> None:
    """The report written atomically (verify.cli.outputs), never over protected."""
    outputs.write_text("--html", path, render(sections, exit_code), protected)

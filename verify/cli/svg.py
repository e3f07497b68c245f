"""`verify-reducer emit --what svg [--out PATH]` and `run --backend sim --svg PATH`: the
plan's layouts, finalizes and counterexamples drawn (codegen.plan_svg), printed as one
SVG document or written to PATH: one file, or one file per picture into a folder. A
program rejected before any plan exists still has the counterexamples its R300s carry
drawn (emit_rejected_svg), then exits 1."""
from __future__ import annotations

import os

from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.verify.cli import outputs
from verify_reducer.verify.oracle.pipeline import UsageError, plan_notes


def require_drawsvg(flag: str) -> None:
    """A usage error (exit 2) naming the extra when drawsvg is missing."""
    try:
        import drawsvg  # noqa: F401
    except ImportError:
        raise UsageError(f"{flag} draws with drawsvg, which is not installed: "
                         "pip install 'verify-reducer[pictures]'") from None


def svg_destination(args, out: str, flag: str) -> None:
    """out checked before any work (verify.cli.outputs): a folder (a path ending in /,
    or an existing directory) made and writable, or a file that may be written."""
    if out.endswith("/") or os.path.isdir(out):
        outputs.check_folder(flag, out)
    else:
        outputs.check_file(flag, out, outputs.run_inputs(args))


def emit_svg(plan, out: str | None, program: str, diagnostics=(),
             flag: str = "--what svg", func: str | None = None,
             protected: tuple[str, ...] = ()) -> str | None:
    """The SVG text to print, or (written to out) the paths written. In a folder each
    picture is `<program stem>-<func>-<object>.svg`, so several programs can share it.
    diagnostics: those whose counterexamples are drawn too (the plan's own notes are).
    plan None: a program rejected before any plan exists; only the counterexamples its
    diagnostics carry with their layouts are drawn (func names the kernel). protected:
    the run's input files, which no picture may replace (outputs.run_inputs)."""
    require_drawsvg(flag)
    from verify_reducer.codegen.plan_svg import (NOTHING_TO_DRAW, NothingToDraw,
                                                 PictureTooLarge, counterexample_pictures,
                                                 plan_pictures, plan_svg)
    diagnostics = (plan_notes(plan) if plan is not None else []) + list(diagnostics)
    func = plan.func.name if plan is not None else func
    try:
        if out is None:
            return plan_svg(plan, diagnostics)
        if out.endswith("/") or os.path.isdir(out):
            outputs.check_folder(flag, out)
            written = []
            pictures = plan_pictures(plan, diagnostics) if plan is not None else \
                counterexample_pictures(None, diagnostics)
            if not pictures:
                raise NothingToDraw(NOTHING_TO_DRAW)
            for picture in pictures:
                stem = os.path.splitext(os.path.basename(program))[0] or "stdin"
                path = os.path.join(out, f"{stem}-{func}-{picture.name}.svg")
                outputs.write_text(flag, path, picture.svg, protected)
                written.append(path)
            return "\n".join(written)
        outputs.write_text(flag, out, plan_svg(plan, diagnostics), protected)
        return out
    except (PictureTooLarge, NothingToDraw) as exc:
        raise UsageError(f"{flag}: {exc}") from None


def carried_counterexamples(diagnostics) -> list:
    """The diagnostics whose counterexamples carry their own layouts (R300 of layout
    inference): what a rejection before any plan exists can still have drawn."""
    return [d for d in diagnostics
            if d.counterexample is not None and d.counterexample.layout is not None]


def emit_rejected_svg(args, err: DiagnosticError, func: str) -> None:
    """`emit --what svg` on a program rejected before any plan exists: the
    counterexamples its diagnostics carry with their layouts (R300 of layout
    inference) are drawn all the same — printed, or written to --out — and the
    rejection is then reported as ever (exit 1). With --json and no --out nothing is
    drawn: the JSON diagnostics carry the counterexamples as data."""
    carried = carried_counterexamples(err.diagnostics)
    if not carried or (args.json and args.out is None):
        raise err
    try:
        text = emit_svg(None, args.out, args.program, carried, func=func,
                        protected=outputs.run_inputs(args))
    except UsageError as exc:       # a picture too large, an unwritable --out: the
        if not args.json:           # rejection is still the program's verdict
            args.ui.note(f"{args.program}: the rejection is not drawn: {exc}")
        raise err from None
    if args.out is None:
        if not args.ui.quiet:
            print(text, flush=True)
    elif not args.json and not args.ui.quiet:
        args.ui.note(f"{args.program}: drew the counterexamples of the rejection: "
                     + ", ".join(text.splitlines()))
    raise err

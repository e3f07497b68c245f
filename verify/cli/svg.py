"""`verify-reducer emit --what svg [--out PATH]` and `run --backend sim --svg PATH`: the
plan's layouts, finalizes and counterexamples drawn (codegen.plan_svg), printed as one
SVG document or written to PATH: one file, or one file per picture into a folder."""
from __future__ import annotations

import os

from verify_reducer.verify.oracle.pipeline import UsageError, plan_notes


def require_drawsvg(flag: str) -> None:
    """A usage error (exit 2) naming the extra when drawsvg is missing."""
    try:
        import drawsvg  # noqa: F401
    except ImportError:
        raise UsageError(f"{flag} draws with drawsvg, which is not installed: "
                         "pip install 'verify-reducer[pictures]'") from None


def emit_svg(plan, out: str | None, program: str, diagnostics=(),
             flag: str = "--what svg") -> str | None:
    """The SVG text to print, or (written to out) the paths written. In a folder each
    picture is `<program stem>-<func>-<object>.svg`, so several programs can share it.
    diagnostics: those whose counterexamples are drawn too (the plan's own notes are)."""
    require_drawsvg(flag)
    from verify_reducer.codegen.plan_svg import PictureTooLarge, plan_pictures, plan_svg
    diagnostics = plan_notes(plan) + list(diagnostics)
    try:
        if out is None:
            return plan_svg(plan, diagnostics)
        if out.endswith("/") or os.path.isdir(out):
            os.makedirs(out, exist_ok=True)
            written = []
            for picture in plan_pictures(plan, diagnostics):
                stem = os.path.splitext(os.path.basename(program))[0] or "stdin"
                path = os.path.join(out, f"{stem}-{plan.func.name}-{picture.name}.svg")
                _write(path, picture.svg)
                written.append(path)
            return "\n".join(written)
        _write(out, plan_svg(plan, diagnostics))
        return out
    except PictureTooLarge as exc:
        raise UsageError(f"{flag}: {exc}") from None


def _write(path: str, text: str, flag: str = "--out") -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot write it ({exc.strerror})") from None

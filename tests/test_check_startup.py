"""A cold `check` loads what checking needs and nothing else (issue 29: a hook or an
editor runs it on every save). The modules of other commands — fuzz's campaign, run's
TileLang comparison, compare's witness, emit's renderers, --html — stay unloaded, and
so does the process pool (a check of small blocks runs them in this process)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NOT_FOR_CHECK = ("multiprocessing", "concurrent.futures",
                 "verify_reducer.verify.fuzzing.command",
                 "verify_reducer.verify.fuzzing.campaign",
                 "verify_reducer.verify.fuzzing.bugreport",
                 "verify_reducer.verify.oracle.witness",
                 "verify_reducer.verify.cli.compare",
                 "verify_reducer.verify.cli.html",
                 "verify_reducer.verify.cli.svg",
                 "verify_reducer.codegen.layout_text",
                 "verify_reducer.codegen.lower.program",
                 "verify_reducer.codegen.ptxas")


def _loaded_after(argv: list[str]) -> str:
    """The last line the probe prints: exit code, output, the listed modules loaded."""
    probe = ("import sys, io, contextlib\n"
             "from verify_reducer.verify.cli.entry import main\n"
             "out = io.StringIO()\n"
             f"with contextlib.redirect_stdout(out):\n    code = main({argv!r})\n"
             f"print(code, out.getvalue().strip(), "
             f"sorted(m for m in {NOT_FOR_CHECK!r} if m in sys.modules))")
    env = {k: v for k, v in os.environ.items() if k != "VERIFY_REDUCER_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_a_cold_check_loads_no_other_commands_modules():
    line = _loaded_after(["check", "-q", "--no-cache", "examples/gemv_pipelined.py"])
    assert line == "0 examples/gemv_pipelined.py: verified []"


def test_the_commands_that_need_them_still_load_them():
    line = _loaded_after(["emit", "-q", "examples/minimal_rfc.py", "--what", "layout"])
    assert line.startswith("0 ") and "'verify_reducer.codegen.layout_text'" in line

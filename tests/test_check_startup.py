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
                 "verify_reducer.codegen.ptxas",
                 # the backends a check does not run: the CUDA renderer and its runner,
                 # TileLang's bridge (verify.oracle.pipeline imports them when one runs)
                 "verify_reducer.codegen.runner",
                 "verify_reducer.codegen.cuda",
                 "verify_reducer.codegen.cuda_stmts",
                 "verify_reducer.codegen.tilelang_backend")


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


def test_a_check_with_jobs_loads_no_process_pool():
    # --jobs forks its workers with os.fork and a pipe each (verify.cli.workers):
    # multiprocessing's Value, Queue and Process cost --jobs 2 about 0.02 s of start-up
    line = _loaded_after(["check", "-q", "--no-cache", "--jobs", "2",
                          "examples/minimal_rfc.py", "examples/bitwise.py"])
    assert line == "2 programs: 2 verified; exit 0 []"


def test_the_commands_that_need_them_still_load_them():
    line = _loaded_after(["emit", "-q", "examples/minimal_rfc.py", "--what", "layout"])
    assert line.startswith("0 ") and "'verify_reducer.codegen.layout_text'" in line
    line = _loaded_after(["emit", "-q", "examples/minimal_rfc.py", "--what", "cuda"])
    assert line.startswith("0 ") and "'verify_reducer.codegen.cuda'" in line


def test_the_backends_names_stay_readable_on_the_pipeline():
    # imported when a backend runs, still `pipeline.TileLangFailed` for the callers
    # that catch them (verify_reducer.oracle, the tests' stand-ins for run_cuda)
    from verify_reducer.codegen import runner, tilelang_backend
    from verify_reducer.verify.oracle import pipeline
    assert pipeline.CudaUnavailable is runner.CudaUnavailable
    for name in ("PassConfigError", "PrimFuncNotFound", "TileLangFailed", "TileLangSetup",
                 "TileLangUnavailable"):
        assert getattr(pipeline, name) is getattr(tilelang_backend, name)
    try:
        pipeline.no_such_name
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


def _blas_after(env_extra: dict[str, str]) -> str:
    """What a check leaves: OPENBLAS_NUM_THREADS as the command saw it after running, and
    how many threads the process has once numpy is loaded (OpenBLAS's own among them)."""
    probe = ("import os, io, contextlib\n"
             "from verify_reducer.verify.cli.entry import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    code = main(['check', '-q', '--no-cache', 'examples/minimal_rfc.py'])\n"
             "import numpy\n"
             "print(code, os.environ.get('OPENBLAS_NUM_THREADS'), "
             "len(os.listdir('/proc/self/task')))")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env={**env, **env_extra},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_the_command_gives_openblas_one_thread_unless_the_user_chose():
    # numpy's OpenBLAS would start a thread per core that the verifier never uses
    # (verify.cli.entry.one_blas_thread); the user's own setting is kept, either name.
    # Z3's timer has threads of its own, so the count is compared with two BLAS threads
    code, blas, threads = _blas_after({}).split()
    assert (code, blas) == ("0", "1")
    code, blas, two = _blas_after({"OPENBLAS_NUM_THREADS": "2"}).split()
    assert (code, blas) == ("0", "2") and int(two) == int(threads) + 1
    code, blas, _ = _blas_after({"OMP_NUM_THREADS": "2"}).split()
    assert (code, blas) == ("0", "None")


def _as_process(argv: list[str], stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """`python -m verify_reducer argv` with an atexit handler of the caller's own (as
    coverage tools and tests/test_scaling_limits.py register one)."""
    probe = ("import atexit, runpy, sys\n"
             "atexit.register(lambda: print('atexit ran', file=sys.stderr))\n"
             f"sys.argv = ['verify-reducer', *{argv!r}]\n"
             "runpy.run_module('verify_reducer', run_name='__main__', alter_sys=True)\n")
    return subprocess.run([sys.executable, "-c", probe], cwd=ROOT, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=300)


def test_the_process_ends_with_the_answer_its_code_and_its_atexit_handlers():
    # verify.cli.entry.run skips the interpreter's teardown, nothing else
    done = _as_process(["check", "-q", "--no-cache", "examples/minimal_rfc.py"])
    assert (done.returncode, done.stdout) == (0, "examples/minimal_rfc.py: verified\n")
    assert done.stderr == "atexit ran\n"
    done = _as_process(["check", "--no-cache", "examples/refused/saturating_add.py"])
    assert done.returncode == 1 and "verdict: rejected" in done.stdout
    assert "error[" in done.stderr and done.stderr.endswith("atexit ran\n")


def test_a_reader_that_goes_away_gets_no_traceback():
    # the reader closes the pipe before the last flush (verify.cli.finish.stdout_closed)
    read, write = os.pipe()
    os.close(read)
    with os.fdopen(write, "w") as closed:
        done = _as_process(["check", "-q", "--no-cache", "examples/minimal_rfc.py",
                            "examples/minimal_v2.py"], stdout=closed)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert done.stderr.endswith("atexit ran\n") and done.returncode == 0


def test_the_verifier_is_imported_with_the_collector_paused_then_frozen_once():
    # verify.cli.entry.verifier: no collection runs while ~800 modules are imported
    # (numpy's import sees the collector off), it is on again afterwards, what the
    # imports made is frozen, and a second command in the same process freezes nothing
    # more (its own objects stay collectable)
    probe = ("import gc, io, sys, contextlib\n"
             "seen = []\n"
             "class Spy:\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             "        if name == 'numpy':\n"
             "            seen.append(gc.isenabled())\n"
             "sys.meta_path.insert(0, Spy())\n"
             "from verify_reducer.verify.cli.entry import main\n"
             "argv = ['check', '-q', '--no-cache', 'examples/minimal_rfc.py']\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    first = main(argv)\n"
             "frozen = gc.get_freeze_count()\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    second = main(argv)\n"
             "print(first, second, seen, gc.isenabled(), frozen > 50000, "
             "gc.get_freeze_count() == frozen)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "0 0 [False] True True True"

"""The pre-commit hook the repository ships (.pre-commit-hooks.yaml, docs/ci.md): its
manifest is valid for pre-commit, and its entry, run by pre-commit in a test repository
on staged kernels, refuses a commit with a rejected kernel and passes verified ones."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from test_cli_conventions import ROOT

clientlib = pytest.importorskip("pre_commit.clientlib")
MANIFEST = ROOT / ".pre-commit-hooks.yaml"


def test_the_manifest_is_valid():
    [hook] = clientlib.load_manifest(str(MANIFEST))
    assert hook["id"] == "verify-reducer" and hook["entry"] == "verify-reducer check -q"
    assert hook["language"] == "python" and hook["pass_filenames"]


def _git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("verify-reducer") is None,
                    reason="the verify-reducer command is not installed on PATH")
def test_pre_commit_runs_the_hook_in_a_test_repository(tmp_path):
    [hook] = clientlib.load_manifest(str(MANIFEST))
    repo = tmp_path / "repo"
    (repo / "kernels").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "minimal_legacy.py", repo / "kernels" / "ok.py")
    shutil.copy(ROOT / "tests" / "programs" / "invalid" / "r201_update_after_finalize.py",
                repo / "kernels" / "bad.py")
    (repo / "notes.py").write_text("print('not a kernel')\n")      # outside `files:`
    # the shipped hook's entry, run by pre-commit from the installed command (a `local`
    # repo: pre-commit would otherwise build a virtualenv of this package from an index)
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n  - repo: local\n    hooks:\n"
        f"      - id: {hook['id']}\n        name: {hook['name']}\n"
        f"        entry: {hook['entry']}\n        language: system\n"
        f"        types: {hook['types']}\n        files: ^kernels/\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    run = [sys.executable, "-m", "pre_commit", "run", "--color", "never"]
    refused = subprocess.run(run, cwd=repo, capture_output=True, text=True, env=env,
                             timeout=300)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "kernels/bad.py: rejected (R201 at 22:13)" in refused.stdout
    assert "kernels/ok.py: verified" in refused.stdout
    assert "notes.py" not in refused.stdout
    _git(repo, "rm", "-q", "--cached", "kernels/bad.py")
    (repo / "kernels" / "bad.py").unlink()
    passed = subprocess.run(run, cwd=repo, capture_output=True, text=True, env=env,
                            timeout=300)
    assert passed.returncode == 0, passed.stdout + passed.stderr

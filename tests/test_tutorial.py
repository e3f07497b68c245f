"""docs/tutorial.md's pictures are what the code draws now: the commands its `sh` block
shows are run again into a temporary folder, and every committed picture must be
byte-for-byte the one drawn (and no picture is missing or left over). Every picture the
tutorial shows exists."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

pytest.importorskip("drawsvg")

from verify_reducer.verify.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorial.md"
PICTURES = ROOT / "docs" / "tutorial"


def _commands() -> list[list[str]]:
    block = re.search(r"```sh\n(.*?)```", TUTORIAL.read_text(), re.S).group(1)
    return [shlex.split(line)[1:] for line in block.splitlines()
            if line.startswith("verify-reducer ")]


def test_the_tutorial_pictures_do_not_drift(tmp_path, monkeypatch, capsys):
    commands = _commands()
    assert len(commands) >= 4
    monkeypatch.chdir(ROOT)
    folders = set()
    for argv in commands:
        flag = "--svg" if "--svg" in argv else "--out"
        at = argv.index(flag) + 1
        folder = Path(argv[at]).relative_to("docs/tutorial")
        folders.add(folder)
        argv[at] = f"{tmp_path / folder}/"
        assert main(argv) in (0, 3), argv
    capsys.readouterr()
    drawn = {p.relative_to(tmp_path) for p in tmp_path.rglob("*.svg")}
    committed = {p.relative_to(PICTURES) for p in PICTURES.rglob("*.svg")}
    assert drawn == committed, "regenerate with the commands of docs/tutorial.md"
    for name in sorted(drawn):
        assert (tmp_path / name).read_bytes() == (PICTURES / name).read_bytes(), \
            f"docs/tutorial/{name} differs from what the code draws now: regenerate it " \
            f"with the commands of docs/tutorial.md"


def test_every_picture_the_tutorial_shows_exists():
    shown = re.findall(r"!\[[^\]]*\]\((tutorial/[^)]+)\)", TUTORIAL.read_text())
    assert shown
    for path in shown:
        assert (ROOT / "docs" / path).is_file(), path

"""The documentation stands alone (docs/design.md §19): no tracked text file refers to a
document or path outside the repository, every `docs/design.md §N` and
`docs/semantics.md §N` citation names a section that exists, and every relative link of
a Markdown file resolves to a file inside the repository."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = (".py", ".md", ".toml", ".sh")
CITED = ("design", "semantics")

# Spelled in pieces so that this file does not contain what it forbids.
FORBIDDEN = {
    "a section of the old design note": re.compile(r"\bDESIGN" + r"\s*(§|Appendix\b)"),
    "the old design note": re.compile(r"\bDESIGN" + r"(\.md|'s)\b"),
    "a folder beside the repository": re.compile(re.escape("../" + "shared")),
    "a path of the machine it was written on": re.compile(re.escape("/" + "work/")),
}

# `docs/design.md §7`, `docs/design.md §6, §12`, `docs/design.md §5.1`
CITATION = re.compile(r"docs/(design|semantics)\.md((?:\s*(?:,|and)?\s*§\s*\d+(?:\.\d+)*)+)")
SECTION_NUMBER = re.compile(r"§\s*(\d+(?:\.\d+)*)")
HEADING = re.compile(r"^#{2,4}\s+(\d+(?:\.\d+)*)\.?\s+\S", re.MULTILINE)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _tracked_files() -> list[Path]:
    """The repository's tracked files (git), or every file when git cannot say."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout
        names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".gpu", "__pycache__", "build", "dist"}
        return [p for p in ROOT.rglob("*") if p.is_file()
                and not skip.intersection(p.relative_to(ROOT).parts)]
    return [ROOT / n for n in names if (ROOT / n).is_file()]


TEXT_FILES = sorted(p for p in _tracked_files() if p.name.endswith(TEXT_SUFFIXES))


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _sections(name: str) -> set[str]:
    return set(HEADING.findall(_text(ROOT / "docs" / f"{name}.md")))


def _citations(text: str) -> list[tuple[str, str, int]]:
    """(document, section, line) of every prefixed citation in text."""
    found = []
    for m in CITATION.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        found += [(m.group(1), n, line) for n in SECTION_NUMBER.findall(m.group(2))]
    return found


def test_the_cited_documents_exist():
    for name in CITED:
        assert (ROOT / "docs" / f"{name}.md").is_file(), f"docs/{name}.md is missing"


@pytest.mark.parametrize("name", CITED)
def test_sections_are_numbered_in_order(name):
    """Top-level sections run 1, 2, 3, ... so that a citation keeps its meaning."""
    top = [n for n in HEADING.findall(_text(ROOT / "docs" / f"{name}.md")) if "." not in n]
    assert top == [str(i) for i in range(1, len(top) + 1)], \
        f"docs/{name}.md numbers its sections {top}"


def test_no_reference_leaves_the_repository():
    assert TEXT_FILES, "no tracked text files found"
    found = []
    for path in TEXT_FILES:
        for lineno, line in enumerate(_text(path).splitlines(), 1):
            found += [f"{_rel(path)}:{lineno}: {what}: {line.strip()[:100]}"
                      for what, pattern in FORBIDDEN.items() if pattern.search(line)]
    assert not found, "references outside the repository:\n" + "\n".join(found)


def test_every_citation_names_an_existing_section():
    sections = {name: _sections(name) for name in CITED}
    wrong, count = [], 0
    for path in TEXT_FILES:
        for doc, number, line in _citations(_text(path)):
            count += 1
            if number not in sections[doc]:
                wrong.append(f"{_rel(path)}:{line}: docs/{doc}.md §{number} "
                             f"(sections: {', '.join(sorted(sections[doc], key=_key))})")
    assert count > 0, "no citation of docs/design.md or docs/semantics.md found"
    assert not wrong, "citations of sections that do not exist:\n" + "\n".join(wrong)


@pytest.mark.parametrize("name", CITED)
def test_bare_section_references_inside_a_document_exist(name):
    """Inside docs/design.md a bare `§7` means its own section 7 (likewise semantics)."""
    text = CITATION.sub("", _text(ROOT / "docs" / f"{name}.md"))
    wrong = sorted({n for n in SECTION_NUMBER.findall(text)} - _sections(name), key=_key)
    assert not wrong, f"docs/{name}.md refers to sections it does not have: {wrong}"


def test_markdown_links_stay_inside_the_repository():
    wrong = []
    for path in (p for p in TEXT_FILES if p.suffix == ".md"):
        for target in LINK.findall(_text(path)):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue            # a URL scheme or an anchor: not a file of ours
            resolved = (path.parent / target.split("#")[0]).resolve()
            if ROOT not in resolved.parents or not resolved.exists():
                wrong.append(f"{_rel(path)}: {target}")
    assert not wrong, "links to files outside the repository or missing:\n" + \
        "\n".join(wrong)


def _key(number: str) -> tuple[int, ...]:
    return tuple(int(p) for p in number.split("."))

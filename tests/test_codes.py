"""Every diagnostic code is documented and pinned by at least one test or program."""
from pathlib import Path

import pytest

from verify_reducer.spec.diagnostics import CODES

ROOT = Path(__file__).resolve().parent.parent
_TESTS = [p for p in (ROOT / "tests").rglob("*.py") if p.name != "test_codes.py"]
_TEXTS = [p.read_text() for p in _TESTS]


@pytest.mark.parametrize("code", sorted(CODES))
def test_code_is_documented(code):
    assert f"| {code} |" in (ROOT / "docs" / "codes.md").read_text()


@pytest.mark.parametrize("code", sorted(CODES))
def test_code_is_pinned(code):
    assert any(code in text for text in _TEXTS), f"no test or program expects {code}"

"""The verdict headers of program files (docs/design.md §17)."""
import numpy as np
import pytest

from verify_reducer.verify.oracle.expect import ExpectationSyntaxError, parse_expectation, unmatched


def test_directives_are_read_from_the_leading_comment_block():
    exp = parse_expectation("# expect: error R201 at 14\n# expect: error R101 at 3:9\n"
                            "# input: x=arange(1, 4)\n# expect: result out=[[1.5]]\n\n"
                            "import x\n# expect: ok\n")
    assert exp.errors == [("R201", 14, None), ("R101", 3, 9)]
    assert exp.inputs["x"].tolist() == [1, 2, 3]
    assert np.array_equal(exp.results["out"], [[1.5]])
    assert not exp.ok                       # after the first line of code: not a header


def test_unknown_directive_is_refused():
    with pytest.raises(ExpectationSyntaxError):
        parse_expectation("# expect: maybe\n")


def test_columns_are_matched_only_when_named():
    got = [("R101", 3, 9), ("R201", 14, 5)]
    assert unmatched([("R201", 14, None), ("R101", 3, 9)], got) == ([], [])
    assert unmatched([("R101", 3, 10)], got) == ([("R101", 3, 10)], got)


def test_inconclusive_is_a_verdict_of_its_own():
    """`# expect: inconclusive` (issue 24): the program verifies nothing wrong, but some
    element has no usable bound, so the check exits 5 (tests/test_programs.py)."""
    exp = parse_expectation("# expect: inconclusive\n# input: x=[1, 2]\nimport x\n")
    assert exp.inconclusive and exp.declared and not exp.ok and not exp.errors
    assert not parse_expectation("# expect: ok\n").inconclusive

"""`verify-reducer fuzz`: the campaign entry point (verify.fuzzing holds the generator,
its oracle, the judge, the minimizer and the campaign runner)."""
from verify_reducer.verify.fuzzing.campaign import Finding, fuzz, groups, run_case  # noqa: F401

__all__ = ["Finding", "fuzz", "groups", "run_case"]

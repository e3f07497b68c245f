"""Test-wide settings: one bounded, derandomized hypothesis profile (docs/design.md §19),
so a run on CI and a run on a laptop try the same examples; and no answers from the
cache of earlier checks (verify.cli.cache): a test that plants a fault must see the
check run. Set in the environment, so the commands the tests start inherit it;
tests/test_cli_cache.py turns the cache on where it is the subject."""
import os

from hypothesis import HealthCheck, settings

os.environ["VERIFY_REDUCER_NO_CACHE"] = "1"

settings.register_profile("bounded", max_examples=60, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("bounded")

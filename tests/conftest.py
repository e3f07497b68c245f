"""Test-wide settings: one bounded, derandomized hypothesis profile (docs/design.md §19),
so a run on CI and a run on a laptop try the same examples."""
from hypothesis import HealthCheck, settings

settings.register_profile("bounded", max_examples=60, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("bounded")

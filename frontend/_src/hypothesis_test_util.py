"""JAX-private: jax._src.hypothesis_test_util (`htu`), how JAX's property tests set up
hypothesis: a deterministic profile (derandomized, no example database, no deadline)
or an interactive one (one verbose example), chosen by JAX_HYPOTHESIS_PROFILE.

    htu.setup_hypothesis(max_examples=50)
    class MyTest(htu.HypothesisShardedTestCase): ...

JAX splits one hypothesis test's examples over Bazel's test shards (TEST_TOTAL_SHARDS);
mjax's tests run unsharded, and more than one shard raises NotImplementedError.
hypothesis itself is imported when setup_hypothesis is called (a test dependency).
"""
from __future__ import annotations

import importlib
import os

from mjax.config import string_option
from mjax._src.test_loader import JaxTestLoader
from mjax._src.test_util_case import JaxTestCase

HYPOTHESIS_PROFILE = string_option(
    "hypothesis_profile", os.getenv("JAX_HYPOTHESIS_PROFILE", "deterministic"),
    "The hypothesis profile tests use: deterministic or interactive.")


def _hypothesis():
    return importlib.import_module("hypothesis")


def _check_unsharded() -> None:
    shards = int(os.environ.get("TEST_TOTAL_SHARDS", "1"))
    if shards > 1:
        raise NotImplementedError(f"TEST_TOTAL_SHARDS={shards}: mjax does not split "
                                  "hypothesis examples over test shards")


class HypothesisShardedTestCase(JaxTestCase):
    """A JaxTestCase whose hypothesis tests JAX spreads over test shards (one shard
    here)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _check_unsharded()


class HypothesisShardedTestLoader(JaxTestLoader):
    pass


def hypothesis_is_thread_safe() -> bool:
    """Whether the installed hypothesis is 6.136.9 or newer (thread-safe)."""
    version = tuple(int(x) for x in _hypothesis().__version__.split(".")[:3])
    return version >= (6, 136, 9)


def setup_hypothesis(max_examples=30) -> None:
    """Registers the 'deterministic' and 'interactive' profiles and loads the one
    jax_hypothesis_profile names."""
    hp = _hypothesis()
    suppressed = [hp.HealthCheck.differing_executors] if hasattr(
        hp.HealthCheck, "differing_executors") else []
    hp.settings.register_profile("deterministic", database=None, derandomize=True,
                                 deadline=None, max_examples=max_examples, print_blob=True,
                                 suppress_health_check=suppressed)
    hp.settings.register_profile(
        "interactive", parent=hp.settings.load_profile("deterministic"), max_examples=1,
        report_multiple_bugs=False, verbosity=hp.Verbosity.verbose,
        phases=(hp.Phase.explicit, hp.Phase.reuse, hp.Phase.generate, hp.Phase.target,
                hp.Phase.explain))     # (no shrinking)
    hp.settings.load_profile(HYPOTHESIS_PROFILE.value)

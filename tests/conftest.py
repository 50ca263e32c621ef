"""Test configuration: hypothesis profiles and shared fixtures.

Hypothesis profiles, chosen with the environment variable ``SKDP_HYPOTHESIS_PROFILE``:

* ``ci`` (default): few examples, no deadline -- keeps the default run fast.
* ``dev``: a few more examples.
* ``deep``: many examples, for on-demand runs
  (``SKDP_HYPOTHESIS_PROFILE=deep python -m pytest``).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile(
    "deep", max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("SKDP_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    """A seeded numpy Generator."""
    return np.random.default_rng(12345)


@pytest.fixture
def coupled_noise(monkeypatch):
    """White-box tests only: make the named modules' ``fit_streams`` depend on the seed alone.

    The library binds each fit's noise to its data and parameters (two fits never share
    noise). Tests that compare two fits *under the same noise* on purpose (an invariance,
    or the exact noise of one step) call ``coupled_noise(module, ...)`` to undo that.
    """
    from skdp.utils import _random

    def streams(random_state, names, **kwargs):
        return _random.spawn_streams(random_state, names)

    def apply(*modules):
        for module in modules:
            monkeypatch.setattr(module, "fit_streams", streams)

    return apply

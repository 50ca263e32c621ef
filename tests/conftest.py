"""Test configuration: hypothesis profiles and shared fixtures.

Shared plain helpers (fast estimator settings, simulated tables) are in
``tests/_fixtures.py``.

Hypothesis profiles, chosen with the environment variable ``SKDP_HYPOTHESIS_PROFILE``:

* ``ci`` (default): few examples, no deadline -- keeps the default run fast.
* ``dev``: a few more examples.
* ``deep``: many examples, for on-demand runs
  (``SKDP_HYPOTHESIS_PROFILE=deep python -m pytest``).
"""

from __future__ import annotations

import contextlib
import os


def _pin_floating_point_kernels():
    """Run numpy's and OpenBLAS's AVX2 kernels on every CPU that has them.

    The release digests (``tests/test_release_digests.py``) and a few exact-tolerance
    tests hash or compare values after iterative algorithms (Newton paths, noise
    calibration), where the last bits of numpy's AVX-512 and OpenBLAS's SkylakeX
    kernels differ from the AVX2 ones and grow past the digests' 10 digits: the same
    code gave other digests on an AVX-512 (Sapphire Rapids) machine than on the machines
    the digests were recorded on. Set here, before numpy is imported (the pytest-xdist
    workers inherit the environment); a value the user set is kept.
    """
    try:
        with open("/proc/cpuinfo") as f:
            avx2 = " avx2" in f.read()
    except OSError:
        return
    if avx2:
        os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "AVX512_SPR,AVX512_ICL,X86_V4")
        os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")


_pin_floating_point_kernels()

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

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


@contextlib.contextmanager
def _torch_threads(n):
    """torch's global intra-op thread count set to ``n``, restored on exit."""
    torch = pytest.importorskip("torch")
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield n
    finally:
        torch.set_num_threads(old)


@pytest.fixture
def one_torch_thread():
    """One torch thread for the test: tiny nets run far faster on one thread (and do not
    fight other processes for a shared CPU). Modules use it with
    ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    with _torch_threads(1):
        yield


@pytest.fixture
def three_threads():
    """A global torch thread count that no default picks (for ``n_jobs`` tests); restored
    after the test."""
    with _torch_threads(3) as n:
        yield n

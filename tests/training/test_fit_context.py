"""The torch fit scaffold (skdp.training._fit_context): one context for every torch fit."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skdp.training import _fit_context  # noqa: E402
from skdp.training._fit_context import (  # noqa: E402
    check_noise_multiplier,
    finite_parameters,
    freeze,
    torch_fit,
)
from skdp.utils._logging import ProgressHandler  # noqa: E402

SETTINGS = {"device": "cpu", "dtype": "float64", "n_jobs": None, "verbose": 0}


def _streams(seed=0):
    return {"init": np.random.default_rng(seed), "noise": np.random.default_rng(seed + 1)}


def test_torch_fit_resolves_device_and_dtype_from_an_estimator_or_a_mapping():
    class Est:
        device, dtype, n_jobs, verbose = "cpu", "float32", None, 0

    for settings in (Est(), SETTINGS):
        with torch_fit(settings, _streams()) as env:
            assert env.device == torch.device("cpu")
            assert env.dtype == (torch.float32 if settings is not SETTINGS else torch.float64)
            t = env.tensor(np.ones((2, 3)))
            assert t.dtype == env.dtype and t.device == env.device
            m = env.to(torch.nn.Linear(2, 1))
            assert next(m.parameters()).dtype == env.dtype
    with pytest.raises(ValueError, match="dtype"):
        with torch_fit({**SETTINGS, "dtype": "int8"}, _streams()):
            pass


def test_torch_fit_leaves_the_global_random_state_as_it_was():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    with torch_fit(SETTINGS, _streams(), seed="init"):
        torch.rand(5)
    np.testing.assert_array_equal(torch.rand(3).numpy(), expected.numpy())


def test_seed_draws_the_global_seed_from_the_named_stream():
    with torch_fit(SETTINGS, _streams(4), seed="init"):
        a = torch.rand(4)
    rng = np.random.default_rng(4)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(rng.integers(0, 2**62)))
        b = torch.rand(4)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    # without seed=, torch's global generator is not touched by the streams
    streams = _streams(4)
    with torch_fit(SETTINGS, streams):
        pass
    assert streams["init"].integers(0, 2**62) == np.random.default_rng(4).integers(0, 2**62)


def test_generators_come_from_the_named_streams():
    with torch_fit(SETTINGS, _streams(7)) as env:
        a = torch.randn(3, generator=env.generator("noise"), dtype=env.dtype)
    with torch_fit(SETTINGS, _streams(7)) as env:
        b = torch.randn(3, generator=env.generator("noise"), dtype=env.dtype)
        c = torch.randn(3, generator=env.generator("init"), dtype=env.dtype)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())


@pytest.mark.parametrize("raises", [False, True])
def test_threads_are_set_from_the_step_size_and_restored(three_threads, raises):
    seen = []
    try:
        with torch_fit(SETTINGS, _streams()) as env:
            env.set_threads(10)  # a small step: one thread under n_jobs=None
            seen.append(torch.get_num_threads())
            if raises:
                raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert seen == [1] and torch.get_num_threads() == three_threads
    with torch_fit({**SETTINGS, "n_jobs": 2}, _streams()) as env:
        env.set_threads(10)
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == three_threads
    with pytest.raises(ValueError, match="n_jobs"):
        with torch_fit({**SETTINGS, "n_jobs": 0}, _streams()) as env:
            env.set_threads(10)
    assert torch.get_num_threads() == three_threads


def test_verbose_attaches_the_progress_handler_for_the_fit_only():
    logger = logging.getLogger("skdp")

    def attached():
        return any(isinstance(h, ProgressHandler) for h in logger.handlers)

    assert not attached()
    with torch_fit({**SETTINGS, "verbose": 1}, _streams()):
        assert attached()
    assert not attached()
    with torch_fit(SETTINGS, _streams()):
        assert not attached()


def test_freeze_and_finite_parameters():
    a, b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
    a.train()
    freeze(a, None, b)
    assert not a.training and not b.training
    assert not any(p.requires_grad for m in (a, b) for p in m.parameters())
    assert finite_parameters(a)
    freeze(a, diverged="diverged")  # finite: no error
    with torch.no_grad():
        a.weight[0, 0] = math.nan
    assert not finite_parameters(a)
    freeze(a)  # no check asked for
    with pytest.raises(ValueError, match="the flow diverged"):
        freeze(b, a, diverged="the flow diverged")


def test_check_noise_multiplier():
    check_noise_multiplier(1.0, 2.0)
    check_noise_multiplier(math.inf, None)
    with pytest.raises(ValueError, match="noise_multiplier must be None"):
        check_noise_multiplier(math.inf, 1.0)


def _fit_dpflowdensity():
    from skdp.density import DPFlowDensity

    X = np.random.default_rng(0).normal(size=(60, 2))
    kw = dict(n_layers=1, hidden_size=4, n_iter=2, batch_size=20, device="cpu")
    DPFlowDensity(epsilon=2.0, bounds=(-4, 4), random_state=0, **kw).fit(X)


def _fit_dpflowvi():
    from skdp.sampling import DPFlowVI

    X = np.random.default_rng(0).normal(size=(60, 2))
    DPFlowVI(epsilon=2.0, n_iter=2, batch_size=20, n_mc=2, device="cpu", random_state=0).fit(X)


def _fit_dpgan():
    from skdp.synthesis import DPGANSynthesizer
    from tests._fixtures import GAN_FAST

    X = np.random.default_rng(0).uniform(size=(60, 2))
    DPGANSynthesizer(epsilon=2.0, bounds=(0, 1), **GAN_FAST).fit(X)


@pytest.mark.parametrize("fit", [_fit_dpflowdensity, _fit_dpflowvi, _fit_dpgan])
def test_every_torch_fit_runs_in_the_scaffold(fit, monkeypatch):
    entered = []
    real = _fit_context.torch_fit

    def spy(settings, streams, **kw):
        entered.append(sorted(streams))
        return real(settings, streams, **kw)

    monkeypatch.setattr(_fit_context, "torch_fit", spy)
    fit()
    assert len(entered) == 1


def test_record_dpsgd_fit_writes_the_facts_and_never_a_private_real_data_loss():
    from skdp.base import DPEstimatorMixin
    from skdp.training._fit_context import record_dpsgd_fit

    class Est(DPEstimatorMixin):
        epsilon = 1.0

        def get_params(self, deep=False):
            return {}

    facts = dict(
        noise_multiplier=1.5,
        sample_rate=0.1,
        n_iter=7,
        history={"step": [7], "epsilon": [0.4]},
        device=torch.device("cpu"),
        delta=1e-5,
        guarantee="exact",
    )
    est = Est()
    breakdown = {"bounds": 0.1, "dpsgd": 0.4}
    record_dpsgd_fit(est, breakdown=breakdown, private=True, loss_curve=[1.0, 2.0], **facts)
    assert (est.noise_multiplier_, est.sample_rate_, est.n_iter_) == (1.5, 0.1, 7)
    assert est.loss_curve_.shape == (0,) and est.device_ == "cpu"
    assert est.history_ == {"step": [7], "epsilon": [0.4]}
    assert est.privacy_breakdown_ == breakdown and est.epsilon_spent_ == 0.1 + 0.4
    assert est.delta_spent_ == 1e-5 and est.privacy_guarantee_ == "exact"
    # a loss of public rows only (a GAN critic on fake rows) is kept
    record_dpsgd_fit(
        est, breakdown=breakdown, private=True, loss_curve=[1.0], loss_reads_data=False, **facts
    )
    assert est.loss_curve_.tolist() == [1.0]
    # a non-private fit keeps its loss and spends inf, with delta 0
    record_dpsgd_fit(est, breakdown={"dpsgd": math.inf}, private=False, loss_curve=[3.0], **facts)
    assert est.loss_curve_.tolist() == [3.0]
    assert (est.epsilon_spent_, est.delta_spent_, est.privacy_guarantee_) == (math.inf, 0.0, "none")

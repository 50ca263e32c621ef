"""The one training loop (skdp.training._loop.run_steps) and the one way into the engine
(skdp.training.make_dp_step)."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skdp.training import DPStep, GaussianPrivatizer, PoissonSampler, make_dp_step  # noqa: E402
from skdp.training._loop import log_every, run_steps  # noqa: E402


def test_log_cadence_is_every_fiftieth_and_the_last_step():
    assert [log_every(n) for n in (1, 49, 50, 120, 1000)] == [1, 1, 1, 2, 20]
    done, logged, shown = [], [], []
    history = {"step": [], "epsilon": []}
    spent = iter(range(100))
    out = run_steps(
        done.append,
        120,
        epsilon=lambda: float(next(spent)),
        history=history,
        on_log=logged.append,
        progress=shown.append,
    )
    assert out is history and done == list(range(1, 121))
    assert history["step"] == logged == shown == list(range(2, 121, 2))
    assert history["epsilon"] == [float(i) for i in range(60)]


def test_non_private_epsilon_is_inf_and_cadences_are_their_own():
    history = {"step": [], "epsilon": []}
    shown = []
    run_steps(lambda t: None, 25, history=history, every=10, progress=shown.append,
              progress_every=2)  # fmt: skip
    assert history == {"step": [10, 20, 25], "epsilon": [math.inf] * 3}
    assert shown == [*range(2, 25, 2), 25]
    assert run_steps(lambda t: None, 3) is None  # nothing recorded without a history


def test_make_dp_step_wires_sampler_privatizer_and_accountant():
    model = torch.nn.Linear(2, 1).double()
    params = dict(model.named_parameters())
    kw = dict(
        n_samples=40,
        sample_rate=0.25,
        noise_multiplier=1.3,
        max_grad_norm=0.5,
        sampling_rng=np.random.default_rng(0),
        noise_rng=np.random.default_rng(1),
        device="cpu",
    )
    step = make_dp_step(
        params, torch.optim.SGD(model.parameters(), lr=0.1), private=True, accountant="rdp", **kw
    )
    assert isinstance(step, DPStep) and step.private
    assert isinstance(step.sampler, PoissonSampler)
    assert isinstance(step.privatizer, GaussianPrivatizer)
    assert step.privatizer.expected_batch_size == step.sampler.expected_batch_size == 10.0
    assert step.privatizer.noise_std == pytest.approx(1.3 * 0.5)
    assert step.accountant.n_steps == 0
    # the noise comes from a generator seeded from noise_rng: the same draw twice
    a = make_dp_step(params, step.optimizer, private=True, accountant="rdp", **{
        **kw, "noise_rng": np.random.default_rng(1)})  # fmt: skip
    zero = {k: torch.zeros_like(p) for k, p in params.items()}
    b = make_dp_step(params, step.optimizer, private=True, accountant="rdp", **{
        **kw, "noise_rng": np.random.default_rng(1)})  # fmt: skip
    noisy_a, noisy_b = a.privatizer.privatize(zero), b.privatizer.privatize(zero)
    for k, v in noisy_a.items():
        torch.testing.assert_close(v, noisy_b[k], atol=0, rtol=0)
        assert bool((v != 0).all())
    plain = make_dp_step(
        params, step.optimizer, private=False, accountant=None, **{**kw, "max_grad_norm": None}
    )
    assert not plain.private and plain.accountant is None
    with pytest.raises(ValueError, match="accountant"):
        make_dp_step(params, step.optimizer, private=True, accountant=None, **kw)

"""DPFlowVI (spec dp_flow.md §4, §8 E1-E3); its one-step oracle audit is in
tests/training/test_dpsgd_oracle.py, the divergence profiles (E4) in
tests/benchmarks/test_flow_vi_paper.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from sklearn.exceptions import NotFittedError

from skdp.accounting import compute_epsilon, resolve_noise_multiplier
from skdp.datasets import (
    NONLINEAR_BETA_TRUE,
    GaussianLocationLogLik,
    NonlinearRepeatedMeasuresLogLik,
    make_nonlinear_repeated_measures,
    nonlinear_log_likelihood,
)
from skdp.exceptions import ApproximateGuaranteeWarning
from skdp.flows import make_flow, standard_normal_log_prob
from skdp.sampling import DPFlowVI
from skdp.sampling._free_energy import _FreeEnergyGradients, _record_free_energy_module

FAST = dict(n_iter=20, n_mc=8, batch_size=20, device="cpu", dtype="float64")


class CorrelatedGaussianLogLik:
    """x_i ~ N(theta, S) with a known 2x2 covariance S (picklable, module level)."""

    def __init__(self, cov):
        self.cov = np.asarray(cov, dtype=float)
        self.prec = torch.as_tensor(np.linalg.inv(self.cov))
        self.logdet = float(np.linalg.slogdet(self.cov)[1])

    def __call__(self, theta, X):
        r = X[None, :, :] - theta[:, None, :]
        quad = torch.einsum("mbi,ij,mbj->mb", r, self.prec.to(r.dtype), r)
        return -0.5 * (quad + self.logdet + 2 * math.log(2 * math.pi))


def _perturbed_flow(kind, p, seed=0):
    g = torch.Generator().manual_seed(seed)
    kw = {} if kind == "planar" else dict(hidden_features=(6,), normalization="affine")
    flow = make_flow(kind, p, n_layers=2, generator=g, **kw).double()
    with torch.no_grad():
        for prm in flow.parameters():
            prm.add_(0.1 * torch.randn(prm.shape, generator=g, dtype=prm.dtype))
    return flow


def _flat_grad(d):
    return torch.cat([v.reshape(v.shape[0], -1) if v.ndim else v.reshape(1) for v in d.values()], 1)


# ------------------------------------------------------------------ E1 decomposition
def test_e1_per_record_terms_sum_to_the_free_energy():
    X = torch.as_tensor(make_nonlinear_repeated_measures(11, random_state=0))
    n = X.shape[0]
    flow = _perturbed_flow("iaf", 5)
    log_lik = NonlinearRepeatedMeasuresLogLik()

    def log_prior(th):
        return -0.5 * (th * th).sum(-1)

    module = _record_free_energy_module(flow, log_lik, log_prior, n, True)
    z = torch.randn(13, 5, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    module.z = z

    def free_energy():
        theta, ladj = flow.inverse_and_ladj(z)
        ll = log_lik(theta, X).sum(1)
        return (standard_normal_log_prob(z) - ladj - log_prior(theta) - ll).mean()

    np.testing.assert_allclose(module(X).sum().item(), free_energy().item(), atol=1e-10)
    # without clipping, the per-record gradients (likelihood + data-free share) sum to the
    # free-energy gradient
    grads = _FreeEnergyGradients(flow, log_lik, log_prior, n)
    grads.module.z = z
    per = grads.likelihood_gradients(X)
    free = grads.data_free_gradient()
    total = {k: per[k].sum(0) + n * free[k] for k in per}
    params = [p for p in flow.parameters()]
    ref = torch.autograd.grad(free_energy(), params)
    for (k, v), r in zip(total.items(), ref, strict=True):
        np.testing.assert_allclose(v.numpy(), r.numpy(), atol=1e-9, err_msg=k)


@pytest.mark.parametrize("kind", ["iaf", "maf", "realnvp", "planar"])
def test_gradient_paths_agree_with_the_per_record_loop(kind):
    X = torch.as_tensor(make_nonlinear_repeated_measures(6, random_state=1))
    flow = _perturbed_flow(kind, 5, seed=3)
    z = torch.randn(7, 5, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    out = {}
    for method in ("jacobian", "records", "loop"):
        g = _FreeEnergyGradients(flow, NonlinearRepeatedMeasuresLogLik(), None, 6, method)
        g.module.z = z
        out[method] = _flat_grad(g.likelihood_gradients(X))
    assert out["loop"].shape[0] == 6
    np.testing.assert_allclose(out["jacobian"].numpy(), out["loop"].numpy(), atol=1e-10)
    np.testing.assert_allclose(out["records"].numpy(), out["loop"].numpy(), atol=1e-10)


def test_record_gradient_depends_on_that_record_only():
    """Sensitivity: a record's gradient is the same in any batch (MC draws are shared, not
    mixed), so adding/removing a row changes the clipped sum by at most C."""
    X = torch.as_tensor(make_nonlinear_repeated_measures(8, random_state=5))
    flow = _perturbed_flow("iaf", 5, seed=6)
    g = _FreeEnergyGradients(flow, NonlinearRepeatedMeasuresLogLik(), None, 8)
    g.module.z = torch.randn(10, 5, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    full = _flat_grad(g.likelihood_gradients(X))
    alone = _flat_grad(g.likelihood_gradients(X[3:4]))
    others = _flat_grad(g.likelihood_gradients(torch.cat([X[:3], X[4:]])))
    np.testing.assert_allclose(full[3:4].numpy(), alone.numpy(), atol=1e-12)
    np.testing.assert_allclose(torch.cat([full[:3], full[4:]]).numpy(), others.numpy(), atol=1e-12)
    assert g.likelihood_gradients(X[:0])[next(iter(g.params))].shape[0] == 0


def test_torch_likelihood_matches_numpy_reference():
    X = make_nonlinear_repeated_measures(9, random_state=2)
    B = np.asarray(NONLINEAR_BETA_TRUE) + np.random.default_rng(0).normal(scale=0.05, size=(3, 5))
    ref = nonlinear_log_likelihood(X, B)
    got = NonlinearRepeatedMeasuresLogLik()(torch.as_tensor(B), torch.as_tensor(X)).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    G = GaussianLocationLogLik(scale=2.0)(torch.zeros(1, 2, dtype=torch.float64), torch.ones(1, 2))
    np.testing.assert_allclose(G.item(), -0.25 - 2 * math.log(2) - math.log(2 * math.pi))


# -------------------------------------------------------------- E2 conjugate recovery
def test_e2_non_private_vi_recovers_the_conjugate_posterior():
    # 300 steps with a faster decay (the same final rate, 0.2 x 0.05, as 800 steps at
    # 0.998): a fourth of the time, and the fit is as close (measured: mean within 0.01
    # posterior sds, sds within 1 %, correlation within 0.01; the bounds below are 0.15,
    # 10 %, 0.08)
    cov = np.array([[1.0, 0.6], [0.6, 2.0]])
    rng = np.random.default_rng(0)
    n = 100
    X = rng.multivariate_normal([1.0, -0.5], cov, size=n)
    vi = DPFlowVI(
        log_lik=CorrelatedGaussianLogLik(cov),
        n_params=2,
        epsilon=math.inf,
        n_iter=300,
        n_mc=64,
        batch_size=n,
        optimizer="adam",
        learning_rate=0.05,
        learning_rate_decay=0.9947,
        device="cpu",
        dtype="float64",
        random_state=0,
    ).fit(X)
    S = vi.sample(40000, random_state=1)
    post_cov = cov / n  # flat prior: N(x_bar, S / n)
    post_sd = np.sqrt(np.diag(post_cov))
    assert np.all(np.abs(S.mean(0) - X.mean(0)) < 0.15 * post_sd)
    np.testing.assert_allclose(S.std(0), post_sd, rtol=0.10)
    corr = np.corrcoef(S.T)[0, 1]
    assert abs(corr - post_cov[0, 1] / post_sd.prod()) < 0.08
    # one loss (negative ELBO) per step, decreasing; the final ELBO is close to the evidence
    assert vi.n_iter_ == 300 and vi.loss_curve_.shape == (300,)
    assert vi.loss_curve_[-50:].mean() < vi.loss_curve_[:50].mean()
    assert abs(-vi.loss_curve_[-50:].mean() - vi.elbo_) < 5.0
    lp = vi.log_prob(S[:50])
    assert lp.shape == (50,) and np.all(np.isfinite(lp))
    assert abs(vi.elbo(X, n_mc=2000, random_state=0) - vi.elbo_) < 1.0


def _conjugate_check(vi, X, cov, n, sd_factor=1.5, mean_sds=3.0, corr_tol=None):
    """Flat prior, x ~ N(theta, cov): the posterior is N(x_bar, cov / n)."""
    S = vi.sample(20000, random_state=1)
    post_sd = np.sqrt(np.diag(cov) / n)
    ratio = S.std(0) / post_sd
    assert np.all((ratio > 1 / sd_factor) & (ratio < sd_factor)), ratio
    z = (S.mean(0) - X.mean(0)) / post_sd
    assert np.all(np.abs(z) < mean_sds), z
    if corr_tol is not None:
        exact = cov[0, 1] / math.sqrt(cov[0, 0] * cov[1, 1])
        assert abs(np.corrcoef(S.T)[0, 1] - exact) < corr_tol
    return ratio, z


def test_non_private_vi_at_defaults_recovers_the_conjugate_posterior():
    """Issue 30: at its defaults (200 steps at n = 2,000) a non-private fit gave posterior
    SDs 5.7-6.7 times the exact 1/sqrt(n): RMSprop moves each parameter by about the
    learning rate (0.01) per step, so the affine layer's log-scale could travel about 2
    of the log(sqrt(2000)) = 3.8 it needs. The Gaussian start (public 1/sqrt(n) scale,
    the affine part trained first at a higher rate, a decaying rate) reproduces it."""
    n = 2000
    X = np.random.default_rng(0).normal(loc=[1.0, -2.0], size=(n, 2))
    vi = DPFlowVI(epsilon=math.inf, random_state=0).fit(X)
    assert vi.n_iter_ == 200 and vi.n_mc_ == 100
    _conjugate_check(vi, X, np.eye(2), n)


def test_non_private_vi_at_defaults_recovers_a_correlated_posterior():
    """The Gaussian part is full-covariance: not the mean-field SDs sqrt(1 - rho^2)."""
    cov = np.array([[1.0, 0.6], [0.6, 2.0]])
    n = 2000
    X = np.random.default_rng(1).multivariate_normal([0.5, -1.0], cov, size=n)
    vi = DPFlowVI(
        log_lik=CorrelatedGaussianLogLik(cov), n_params=2, epsilon=math.inf, random_state=1
    ).fit(X)
    _conjugate_check(vi, X, cov, n, sd_factor=1.25, corr_tol=0.1)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n", "d", "loc", "rho"),
    [
        (200, 2, 1.0, 0.0),
        (2000, 2, 5.0, 0.0),
        (2000, 5, 1.0, 0.0),
        (20000, 2, 1.0, 0.0),
        (2000, 2, 1.0, -0.6),
    ],
)
def test_non_private_vi_at_defaults_recovers_conjugate_posteriors(n, d, loc, rho):
    cov = np.eye(d)
    cov[0, 1] = cov[1, 0] = rho
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = rng.multivariate_normal(np.full(d, loc), cov, size=n)
        kw = {} if rho == 0 else dict(log_lik=CorrelatedGaussianLogLik(cov), n_params=d)
        vi = DPFlowVI(epsilon=math.inf, random_state=seed, **kw).fit(X)
        # the fitted correlation of an isotropic posterior at n = 20,000 was -0.13..0.17:
        # the triangular map's gradient noise (batches of 256) against a 1/sqrt(n) scale
        _conjugate_check(vi, X, cov, n, corr_tol=0.2)


def test_the_gaussian_start_is_for_non_private_fits_only(monkeypatch):
    """A non-private fit starts the affine layer at the public scale 1/sqrt(n) with a
    full-covariance Gaussian part; a private fit is built and trained as before (the
    private path's behaviour is unchanged: same flow, one learning rate, no decay)."""
    import skdp.sampling._vi_fit as mod

    seen = []
    real = mod.build_vi_flow

    def spy(*args, **kwargs):
        seen.append((kwargs["log_scale"], kwargs["full"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(mod, "build_vi_flow", spy)
    X = np.random.default_rng(0).normal(size=(100, 2))
    private = DPFlowVI(epsilon=2.0, random_state=0, **FAST).fit(X)
    plain = DPFlowVI(epsilon=math.inf, random_state=0, **FAST).fit(X)
    assert seen == [(0.0, False), (-0.5 * math.log(100), True)]
    assert len(private.flow_.transforms) == len(plain.flow_.transforms) - 1
    # one learning rate, constant, for the private fit; two groups and a schedule else
    made = []
    real_opt = mod.make_vi_optimizer

    def spy_opt(*args, **kwargs):
        opt, sched = real_opt(*args, **kwargs)
        made.append((kwargs["gaussian"], kwargs["decay"], len(opt.param_groups), sched))
        return opt, sched

    monkeypatch.setattr(mod, "make_vi_optimizer", spy_opt)
    DPFlowVI(epsilon=2.0, random_state=0, **FAST).fit(X)
    DPFlowVI(epsilon=math.inf, random_state=0, **FAST).fit(X)
    assert made[0] == (False, 1.0, 1, None)
    assert made[1][:3] == (True, 1.0, 2) and made[1][3] is not None


def test_gaussian_start_schedule_is_a_public_function_of_n_and_n_iter():
    """A cosine to min(0.1, 50 / n) of the start, the Gaussian part alone for the first
    half of the steps at min(30 times the rate, 0.3), ramped over the first tenth."""
    from skdp.sampling._vi_flow import (
        build_vi_flow,
        gaussian_start_final_rate,
        gaussian_start_log_scale,
        gaussian_start_rate,
        make_vi_optimizer,
    )

    assert gaussian_start_final_rate(20) == 0.1 == gaussian_start_final_rate(500)
    assert gaussian_start_final_rate(2000) == pytest.approx(0.025)
    assert gaussian_start_final_rate(20000) == pytest.approx(0.0025)
    assert gaussian_start_log_scale(10_000) == pytest.approx(-math.log(100))
    assert gaussian_start_rate(0.01) == pytest.approx(0.3) == gaussian_start_rate(0.05)
    assert gaussian_start_rate(0.001) == pytest.approx(0.03)
    flow = build_vi_flow(
        "iaf", 3, n_layers=1, hidden_size=None, normalization="affine",
        generator=torch.Generator().manual_seed(0), log_scale=-2.0, full=True,
    )  # fmt: skip
    assert torch.allclose(flow.transforms[0].log_scale, torch.full((3,), -2.0))
    z = torch.randn(7, 3, generator=torch.Generator().manual_seed(1))
    theta, _ = flow.inverse_and_ladj(z)
    assert torch.allclose(theta, z * math.exp(-2.0), atol=1e-6)  # starts at N(0, e^-4 I)
    opt, sched = make_vi_optimizer(
        torch.optim.RMSprop, flow.parameters(), flow, learning_rate=0.01, decay=1.0,
        n_iter=100, gaussian=True, final_rate=0.1,
    )  # fmt: skip
    rates = []
    for _ in range(100):
        rates.append([g["lr"] for g in opt.param_groups])
        opt.step()
        sched.step()
    rates = np.array(rates)

    def cosine(t):  # from 1 to the final rate 0.1 over the 100 steps
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t / 100))

    np.testing.assert_allclose(rates[0, 0], 0.3 / 10)  # the ramp's first step
    np.testing.assert_allclose(rates[9, 0], 0.3 * cosine(9))  # end of the ramp
    assert np.all(rates[:50, 1] == 0) and rates[50, 1] > 0  # the flow waits half the run
    np.testing.assert_allclose(rates[50, 1], 0.01 * cosine(50))
    np.testing.assert_allclose(rates[99], np.array([0.3, 0.01]) * cosine(99))


# --------------------------------------------------------- privacy facts, reproducibility
def test_private_fit_accounting_facts():
    X = np.random.default_rng(1).normal(size=(100, 2))
    vi = DPFlowVI(epsilon=2.0, delta=1e-5, random_state=0, **FAST).fit(X)
    kw = {"delta": 1e-5, "sample_rate": 0.2, "steps": 20, "accountant": "pld"}  # the default
    sigma, _ = resolve_noise_multiplier(epsilon=2.0, **kw)
    assert vi.noise_multiplier_ == pytest.approx(sigma)
    assert vi.sample_rate_ == pytest.approx(0.2)
    assert vi.n_iter_ == 20 and isinstance(vi.n_iter_, int)
    spent = compute_epsilon(noise_multiplier=sigma, **kw)
    assert vi.epsilon_spent_ == pytest.approx(spent)
    assert 0.99 * 2.0 <= vi.epsilon_spent_ <= 2.0
    assert vi.privacy_breakdown_ == {"dpsgd": vi.epsilon_spent_}
    assert vi.delta_spent_ == 1e-5 and vi.privacy_guarantee_ == "exact"
    assert math.isfinite(vi.mu_gdp_)
    assert set(vi.history_) == {"step", "epsilon"} and vi.history_["step"][-1] == 20
    assert np.all(np.diff(vi.history_["epsilon"]) >= 0)
    # no statistic of the private data is kept
    assert math.isnan(vi.elbo_) and vi.loss_curve_.shape == (0,)
    assert vi.n_params_ == 2 and vi.sample(5).shape == (5, 2)


def test_non_private_fit_facts():
    X = np.random.default_rng(1).normal(size=(50, 2))
    vi = DPFlowVI(epsilon=math.inf, random_state=0, **FAST).fit(X)
    assert vi.epsilon_spent_ == math.inf and vi.noise_multiplier_ == 0.0
    assert vi.mu_gdp_ == math.inf and math.isfinite(vi.elbo_)
    assert vi.loss_curve_.shape == (vi.n_iter_,) and np.all(np.isfinite(vi.loss_curve_))


def test_gdp_clt_is_approximate_and_warns():
    X = np.random.default_rng(1).normal(size=(60, 1))
    with pytest.warns(ApproximateGuaranteeWarning):
        vi = DPFlowVI(epsilon=3.0, accountant="gdp_clt", random_state=0, **FAST).fit(X)
    assert vi.privacy_guarantee_ == "approximate"


def test_too_small_noise_multiplier_raises_before_training():
    X = np.random.default_rng(1).normal(size=(60, 1))
    with pytest.raises(ValueError, match="noise_multiplier"):
        DPFlowVI(epsilon=0.5, noise_multiplier=0.3, random_state=0, **FAST).fit(X)
    with pytest.raises(ValueError, match="epsilon=inf"):
        DPFlowVI(epsilon=math.inf, noise_multiplier=1.0, **FAST).fit(X)


@pytest.mark.parametrize("privatize", ["per_record_full", "likelihood_only"])
def test_same_seed_same_result_different_seed_differs(privatize):
    X = np.random.default_rng(2).normal(size=(80, 2))
    kw = dict(epsilon=1.0, privatize=privatize, **FAST)
    a = DPFlowVI(random_state=3, **kw).fit(X)
    b = DPFlowVI(random_state=3, **kw).fit(X)
    c = DPFlowVI(random_state=4, **kw).fit(X)
    for pa, pb in zip(a.flow_.parameters(), b.flow_.parameters(), strict=True):
        assert torch.equal(pa, pb)
    np.testing.assert_array_equal(a.sample(10, random_state=3), b.sample(10, random_state=3))
    # the fitted model keeps no generator: unseeded draws use fresh OS entropy
    assert not np.array_equal(a.sample(10), b.sample(10))
    assert not np.array_equal(a.sample(10, random_state=0), c.sample(10, random_state=0))
    np.testing.assert_array_equal(a.sample(4, random_state=9), a.sample(4, random_state=9))
    assert a.epsilon_spent_ == b.epsilon_spent_ == c.epsilon_spent_


def test_privatize_options_differ_only_in_the_privatised_part(coupled_noise):
    import skdp.sampling._flow_vi as module

    coupled_noise(module)  # the same draws for both options, on purpose
    X = np.random.default_rng(2).normal(size=(80, 2))
    full = DPFlowVI(epsilon=1.0, privatize="per_record_full", random_state=3, **FAST).fit(X)
    lik = DPFlowVI(epsilon=1.0, privatize="likelihood_only", random_state=3, **FAST).fit(X)
    assert full.epsilon_spent_ == lik.epsilon_spent_
    assert not np.array_equal(full.sample(5, random_state=0), lik.sample(5, random_state=0))
    # non-private: both use the exact data-free gradient, so they coincide
    a = DPFlowVI(epsilon=math.inf, privatize="per_record_full", random_state=3, **FAST).fit(X)
    b = DPFlowVI(epsilon=math.inf, privatize="likelihood_only", random_state=3, **FAST).fit(X)
    np.testing.assert_array_equal(a.sample(5, random_state=0), b.sample(5, random_state=0))


# -------------------------------------------------------------------- validation
def test_input_validation():
    X = np.random.default_rng(0).normal(size=(30, 2))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError):
        DPFlowVI(**FAST).fit(bad)
    with pytest.raises(ValueError, match="n_params is required"):
        DPFlowVI(log_lik=GaussianLocationLogLik(), **FAST).fit(X)
    with pytest.raises(ValueError, match="n_params"):
        DPFlowVI(n_params=3, **FAST).fit(X)
    with pytest.raises(ValueError, match="shape"):
        DPFlowVI(log_lik=lambda th, x: th.sum(1), n_params=2, **FAST).fit(X)
    with pytest.raises(ValueError, match="hidden_size"):
        DPFlowVI(n_params=4, hidden_size=2, **FAST).fit(np.zeros((30, 4)))
    with pytest.raises(NotFittedError):
        DPFlowVI().sample(2)
    vi = DPFlowVI(epsilon=math.inf, **FAST).fit(X)
    with pytest.raises(ValueError, match="theta"):
        vi.log_prob(np.zeros((2, 3)))
    with pytest.raises(ValueError):
        vi.log_prob(np.array([[np.inf, 0.0]]))
    with pytest.raises(ValueError):
        vi.sample(-1)
    assert vi.sample(0).shape == (0, 2)
    with pytest.raises(ValueError):
        vi.elbo(np.zeros((3, 5)))


def test_no_score_and_no_density_mixin():
    assert not hasattr(DPFlowVI(), "score")
    assert not hasattr(DPFlowVI(), "score_samples")


def test_log_prob_normalised_in_one_dimension():
    X = np.random.default_rng(0).normal(loc=2.0, scale=1.0, size=(30, 1))
    vi = DPFlowVI(epsilon=math.inf, **FAST, random_state=0).fit(X)
    grid = np.linspace(-10, 14, 20001)[:, None]
    mass = np.trapezoid(np.exp(vi.log_prob(grid)), grid[:, 0])
    assert mass == pytest.approx(1.0, abs=1e-3)


# ------------------------------------------------------------------- slow: §4.2 shape
@pytest.mark.slow
def test_nonlinear_model_dp_vi_shape():
    """Reduced §4.2 (the default of benchmarks/flow_vi.py): non-private VI matches the exact
    posterior's means; DP at eps=1 keeps the means roughly and neither collapses nor
    explodes the posterior's SDs."""
    X = make_nonlinear_repeated_measures(6000, random_state=0)
    kw = dict(
        log_lik=NonlinearRepeatedMeasuresLogLik(),
        n_params=5,
        n_iter=2000,
        n_mc=50,
        batch_size=500,
        learning_rate=0.05,
        learning_rate_decay=0.999,
        device="cpu",
        dtype="float32",
        random_state=1,
    )
    S_np = DPFlowVI(epsilon=math.inf, **kw).fit(X).sample(20000, random_state=1001)
    S_dp = DPFlowVI(epsilon=1.0, **kw).fit(X).sample(20000, random_state=1001)
    laplace_sd = np.array([0.0266, 0.0037, 0.0179, 0.0152, 0.0194])  # spec §5.5 / test F2
    beta = np.asarray(NONLINEAR_BETA_TRUE)
    assert np.all(np.abs(S_np.mean(0) - beta) < 4 * laplace_sd + 0.05)
    assert np.all(np.abs(S_dp.mean(0) - S_np.mean(0)) < 0.15)
    # The DP posterior's SDs are not reliably inflated: over random_state 1-5 the median
    # ratio of DP to non-private SDs was 1.40, 3.67, 1.00, 0.76 and 2.36 (0.65 at seed 1
    # with the RDP accountant), single ratios 0.23-7.3, the mean shifts at most 0.092.
    # This test had asserted a median ratio above 1.5, which held at one noise draw only.
    ratio = S_dp.std(0) / S_np.std(0)
    assert np.all((ratio > 0.1) & (ratio < 10.0)), ratio


# ------------------------------------------------------------- torch threads (n_jobs)
def test_n_jobs_sets_the_threads_of_training_and_restores_them(monkeypatch, three_threads):
    from skdp.training import _privatizer

    seen = []
    real = _privatizer.clip_and_sum

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(_privatizer, "clip_and_sum", spy)
    X = np.random.default_rng(0).normal(size=(100, 2))
    kw = {**FAST, "n_iter": 2, "epsilon": 2.0, "random_state": 0}
    for n_jobs, during in ((1, 1), (2, 2), (None, 1)):  # None: a tiny flow gets 1 thread
        DPFlowVI(n_jobs=n_jobs, **kw).fit(X)
        assert seen and set(seen) == {during}
        seen.clear()
        assert torch.get_num_threads() == three_threads


def test_n_jobs_restores_the_threads_when_fit_raises(monkeypatch, three_threads):
    from skdp.training import _privatizer

    def boom(*args, **kwargs):
        assert torch.get_num_threads() == 1
        raise RuntimeError("training failed")

    monkeypatch.setattr(_privatizer, "clip_and_sum", boom)
    X = np.random.default_rng(0).normal(size=(100, 2))
    with pytest.raises(RuntimeError, match="training failed"):
        DPFlowVI(epsilon=2.0, n_jobs=1, random_state=0, **FAST).fit(X)
    assert torch.get_num_threads() == three_threads


def test_default_n_iter_is_a_public_function_of_n_and_batch_size(monkeypatch):
    """Default step count: min(800, max(200, ceil(10 n / batch_size))), nothing else."""
    import skdp.sampling._vi_fit as mod

    assert mod.default_n_iter(None, 2000, 256) == 200
    assert mod.default_n_iter(None, 10_000, 256) == 391
    assert mod.default_n_iter(None, 10**6, 256) == 800
    assert mod.default_n_iter(37, 10**6, 256) == 37
    seen = []

    def spy(n_iter, n, batch_size):  # the fit passes only public values to the rule
        seen.append((n_iter, n, batch_size))
        return 7

    monkeypatch.setattr(mod, "default_n_iter", spy)
    X = np.random.default_rng(0).normal(size=(40, 1))
    kw = {k: v for k, v in FAST.items() if k != "n_iter"}
    vi = DPFlowVI(epsilon=2.0, random_state=0, **kw).fit(X)
    assert seen == [(None, 40, 20)]
    assert vi.get_params()["n_iter"] is None
    assert vi.n_iter_ == 7 == vi.history_["step"][-1]
    with pytest.raises(ValueError, match="n_iter"):
        DPFlowVI(n_iter="fast", **kw).fit(X)


def test_default_n_mc_is_a_public_function_of_privacy(monkeypatch):
    """Default MC draws: 16 for a private fit, 100 for epsilon=inf; a given n_mc is kept."""
    import skdp.sampling._vi_fit as mod

    assert mod.default_n_mc(None, True) == 16
    assert mod.default_n_mc(None, False) == 100
    assert mod.default_n_mc(5, True) == 5 == mod.default_n_mc(5, False)
    assert DPFlowVI().get_params()["n_mc"] is None
    seen = []
    real = mod.default_n_mc

    def spy(n_mc, private):  # the fit passes only public values to the rule
        seen.append((n_mc, private))
        return real(n_mc, private)

    monkeypatch.setattr(mod, "default_n_mc", spy)
    X = np.random.default_rng(0).normal(size=(40, 1))
    kw = {k: v for k, v in FAST.items() if k != "n_mc"}
    assert DPFlowVI(epsilon=2.0, random_state=0, **kw).fit(X).n_mc_ == 16
    assert DPFlowVI(epsilon=math.inf, random_state=0, **kw).fit(X).n_mc_ == 100
    assert DPFlowVI(epsilon=2.0, n_mc=3, random_state=0, **kw).fit(X).n_mc_ == 3
    assert seen == [(None, True), (None, False), (3, True)]
    with pytest.raises(ValueError, match="n_mc"):
        DPFlowVI(n_mc=0, **kw).fit(X)

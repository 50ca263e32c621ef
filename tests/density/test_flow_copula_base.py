"""DPFlowDensity's private Gaussian-copula base (``base="copula"``, the default).

The two fixed layers (noisy marginal histograms, then a noisy correlation of the
Gaussianised rows) are released with the Gaussian mechanism before DP-SGD; the plan is the
only source of the spend. Tested here: the plan's accounting alone (shares add up to the
budget, the noise meets each share at the stated sensitivity, ``k`` multiplies the
sensitivities once), brute-force sensitivities of the two statistics, the fixed layers'
invertibility and log-determinants, a normalised density, the patient-level fit, and an
audit of the copula release against one patient with many rows.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skdp.density import DPFlowDensity  # noqa: E402
from skdp.density._copula_base import (  # noqa: E402
    FixedLinear,
    MarginalGaussianiser,
    _bin_index,
    correlation_clip_norm,
    default_n_bins,
    noisy_correlation_factor,
    noisy_marginal_probs,
)
from skdp.density._plan import BASE_SHARE, FlowDensityPlan  # noqa: E402
from skdp.mechanisms import gaussian_delta  # noqa: E402


def _plan(**kw):
    args = dict(n=50_000, epsilon=2.0, delta=1e-5, bounds_estimated=False, batch_size=128,
                n_iter=200, base="copula", n_numeric=4, trainable=True)  # fmt: skip
    args.update(kw)
    return FlowDensityPlan.build(**args)


@pytest.mark.parametrize("bounds_estimated", [False, True])
@pytest.mark.parametrize("trainable", [False, True])
@pytest.mark.parametrize("k", [None, 3])
def test_plan_alone_breakdown_adds_up_to_the_budget(bounds_estimated, trainable, k):
    plan = _plan(bounds_estimated=bounds_estimated, trainable=trainable, max_rows_per_group=k)
    parts = plan.breakdown()
    assert set(parts) == {"bounds", "marginals", "correlation", "dpsgd"}
    assert sum(parts.values()) <= plan.epsilon * (1 + 1e-9)
    assert sum(parts.values()) >= 0.99 * plan.epsilon
    rest = plan.epsilon - plan.eps_bounds
    base = plan.eps_marginals + plan.eps_correlation
    assert math.isclose(base, rest * (BASE_SHARE if trainable else 1.0))
    assert plan.delta_base + plan.delta_dpsgd == plan.delta
    if not trainable:
        assert parts["dpsgd"] == 0.0 and plan.delta_dpsgd == 0.0


@pytest.mark.parametrize("k", [None, 4])
def test_plan_noise_meets_each_share_at_the_stated_sensitivity(k):
    plan = _plan(max_rows_per_group=k, n_numeric=6)
    kk = k or 1
    R2 = correlation_clip_norm(6) ** 2
    d_m = gaussian_delta(plan.sigma_marginals, sensitivity=kk * math.sqrt(6),
                         epsilon=plan.eps_marginals)  # fmt: skip
    d_c = gaussian_delta(plan.sigma_correlation, sensitivity=kk * R2, epsilon=plan.eps_correlation)
    assert d_m <= plan.delta_base / 2 * (1 + 1e-9)
    assert d_c <= plan.delta_base / 2 * (1 + 1e-9)
    # k multiplies the sensitivities once: the noise scales by k exactly
    if k:
        row = _plan(n_numeric=6)
        assert math.isclose(plan.sigma_marginals, k * row.sigma_marginals, rel_tol=1e-6)
        assert math.isclose(plan.sigma_correlation, k * row.sigma_correlation, rel_tol=1e-6)


def test_plan_one_numeric_column_spends_the_base_on_the_marginals_and_none_is_the_paper():
    plan = _plan(n_numeric=1)
    assert plan.eps_correlation == 0.0 and plan.eps_marginals > 0
    old = _plan(base="none")
    assert old.breakdown().keys() == {"bounds", "dpsgd"} and old.delta_dpsgd == old.delta
    inf = _plan(epsilon=math.inf)
    assert inf.sigma_marginals == inf.sigma_correlation == 0.0 and not inf.private


def test_default_bins_are_a_public_rule():
    assert [default_n_bins(n) for n in (50, 442, 2000, 10_000, 10**7)] == [8, 8, 16, 32, 64]


def _stats(Z, numeric, n_bins, R):
    """The un-noised statistics the two mechanisms release (noise 0)."""
    counts = np.stack([np.bincount(_bin_index(Z[:, j], n_bins), minlength=n_bins)
                       for j in np.flatnonzero(numeric)])  # fmt: skip
    C = Z[:, numeric]
    C = C * np.minimum(1.0, R / np.maximum(np.linalg.norm(C, axis=1), 1e-300))[:, None]
    S = C.T @ C
    return counts.ravel(), S[np.triu_indices(C.shape[1])]


def test_brute_force_sensitivity_of_the_two_statistics():
    """Add/remove one row (and one patient of k rows) never moves the histograms by more
    than ``sqrt(d_num)`` (``k sqrt(d_num)``) nor the clipped upper-triangle sum by more
    than ``R^2`` (``k R^2``) in L2, extreme rows included."""
    rng = np.random.default_rng(0)
    d, n_bins = 5, 16
    numeric = np.array([True, True, False, True, True])
    R = correlation_clip_norm(4)
    worst_h = worst_c = 0.0
    for _ in range(300):
        Z = rng.uniform(-2.5, 2.5, (20, d))
        k = int(rng.integers(1, 4))
        extra = rng.choice([-4.0, 4.0, 0.0], size=(k, d)) * rng.uniform(0, 1.5, (k, d))
        h0, c0 = _stats(Z, numeric, n_bins, R)
        h1, c1 = _stats(np.vstack([Z, extra]), numeric, n_bins, R)
        worst_h = max(worst_h, np.linalg.norm(h1 - h0) / (k * math.sqrt(4)))
        worst_c = max(worst_c, np.linalg.norm(c1 - c0) / (k * R**2))
    assert worst_h <= 1.0 + 1e-12 and worst_c <= 1.0 + 1e-9
    assert worst_h > 0.99  # the bound is attained (k rows in one bin per column)


def _gaussianiser(seed=0, D=3):
    rng = np.random.default_rng(seed)
    Z = np.column_stack([rng.beta(2, 5, 2000) * 4 - 2 for _ in range(D)])
    numeric = np.array([True] * (D - 1) + [False])
    probs = noisy_marginal_probs(Z, numeric, 16, 2.0, rng)
    return MarginalGaussianiser(probs, numeric).double(), numeric


def test_marginal_gaussianiser_inverts_and_its_log_det_is_the_jacobian():
    layer, numeric = _gaussianiser()
    x = torch.tensor(np.random.default_rng(1).uniform(-2.6, 2.6, (50, 3)))
    z, ladj = layer(x)
    back, ladj_inv = layer.inverse_and_ladj(z)
    assert torch.allclose(back, x, atol=1e-7)
    assert torch.allclose(ladj, -ladj_inv, atol=1e-8)
    for i in range(5):
        J = torch.autograd.functional.jacobian(lambda v: layer(v)[0], x[i])
        assert math.isclose(float(torch.logdet(J)), float(ladj[i]), abs_tol=1e-6)
    assert torch.equal(z[:, 2], x[:, 2])  # a masked coordinate passes unchanged


def test_fixed_linear_whitening_inverts():
    rng = np.random.default_rng(2)
    G = rng.multivariate_normal([0, 0, 0], [[1, 0.8, 0], [0.8, 1, 0.3], [0, 0.3, 1]], 3000)
    L = noisy_correlation_factor(G, np.array([True, True, True]), 3.0, 10.0, rng)
    assert np.allclose(np.diag(L @ L.T), 1.0)
    layer = FixedLinear(L).double()
    x = torch.tensor(G[:10])
    z, ladj = layer(x)
    assert torch.allclose(layer.inverse(z), x)
    assert math.isclose(float(ladj[0]), -float(np.log(np.linalg.det(L))))


def test_copula_only_density_integrates_to_one_in_original_units():
    X = np.random.default_rng(3).gamma(2.0, 1.0, (3000, 1))
    est = DPFlowDensity(epsilon=1.0, bounds=(0.0, 12.0), n_layers=0, device="cpu",
                        random_state=0).fit(X)  # fmt: skip
    grid = np.linspace(-30, 40, 40001)[:, None]
    mass = np.trapezoid(np.exp(est.score_samples(grid)), grid[:, 0])
    assert abs(mass - 1.0) < 2e-3
    assert est.n_iter_ == 0 and est.privacy_breakdown_["dpsgd"] == 0.0
    assert est.epsilon_spent_ == pytest.approx(1.0)
    S = est.sample(200, random_state=0)
    assert S.shape == (200, 1) and S.min() >= 0.0 and S.max() <= 12.0


def test_default_fit_reports_the_plan_and_the_paper_setting_refuses_no_layer():
    X = np.random.default_rng(4).normal(size=(400, 3))
    # a budget at which the plan keeps the copula for n = 400 (NOISE_TO_* rule)
    est = DPFlowDensity(epsilon=20.0, bounds=(-4.0, 4.0), n_layers=1, hidden_size=8, n_iter=20,
                        device="cpu", random_state=0).fit(X)  # fmt: skip
    parts = est.privacy_breakdown_
    assert set(parts) == {"bounds", "marginals", "correlation", "dpsgd"}
    assert math.isclose(sum(parts.values()), est.epsilon_spent_) and est.epsilon_spent_ <= 20
    assert est.sample(5, random_state=1).shape == (5, 3)
    assert np.all(np.isfinite(est.score_samples(X[:10] * 3)))  # outside the bounds too
    with pytest.raises(ValueError, match="n_layers=0"):
        DPFlowDensity(base="none", n_layers=0, bounds=(-4.0, 4.0)).fit(X)


def test_patient_level_copula_fit():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 2))
    groups = np.repeat(np.arange(200), 3)
    est = DPFlowDensity(epsilon=2.0, bounds=(-4.0, 4.0), n_layers=0, max_rows_per_group=3,
                        device="cpu", random_state=0).fit(X, groups=groups)  # fmt: skip
    assert est.privacy_unit_ == "group" and est.max_rows_per_group_ == 3
    assert est.epsilon_spent_ <= 2.0 + 1e-9


K = 5
EPS = 1.0


def _canary_audit(use_groups, n_trials=1000, seed=1):
    """D (200 patients, one row near 0) vs D + one patient with K rows at the upper
    bound; score: the released density at the canary (threshold_audit, 95 %)."""
    from skdp.auditing import threshold_audit

    rng = np.random.default_rng(seed)
    X0 = rng.uniform(-0.2, 0.2, (200, 1))
    worlds = [(X0, np.arange(200)), (np.vstack([X0, np.ones((K, 1))]),
                                     np.r_[np.arange(200), np.full(K, 200)])]  # fmt: skip
    labels = rng.permutation(np.arange(n_trials) % 2)
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        X, g = worlds[label]
        est = DPFlowDensity(epsilon=EPS, delta=1e-5, bounds=(-1.0, 1.0), n_layers=0,
                            max_rows_per_group=K if use_groups else None, device="cpu",
                            random_state=int(rng.integers(2**31)))  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, groups=g if use_groups else None)
        scores[t] = float(est.score_samples(np.full((1, 1), 0.99))[0])
    return threshold_audit(scores, labels, epsilon=EPS, delta=1e-5)


@pytest.mark.slow
def test_copula_release_protects_a_patient_with_many_rows_only_with_groups():
    row = _canary_audit(use_groups=False)
    assert row.epsilon_lb > EPS, row  # control: per-row noise, about K epsilon per patient
    patient = _canary_audit(use_groups=True)
    assert patient.epsilon_lb <= EPS, patient


@pytest.mark.parametrize("bounds", [(-4.0, 4.0), None])
def test_copula_privacy_facts_come_from_the_plan_alone(bounds):
    X = np.random.default_rng(6).normal(size=(1000, 3))
    kw = dict(n_layers=1, hidden_size=8, n_iter=10, batch_size=50, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPFlowDensity(epsilon=3.0, bounds=bounds, random_state=0, **kw).fit(X)
    plan = FlowDensityPlan.build(n=1000, epsilon=3.0, delta=1e-5,
                                 bounds_estimated=bounds is None, batch_size=50, n_iter=10,
                                 base="copula", n_numeric=3, trainable=True)  # fmt: skip
    assert plan.breakdown() == est.privacy_breakdown_
    assert sum(plan.breakdown().values()) == est.epsilon_spent_ <= 3.0
    assert (plan.delta_spent, plan.noise_multiplier) == (est.delta_spent_, est.noise_multiplier_)
    assert est.history_["epsilon"][-1] == plan.eps_dpsgd


def test_edge_inputs_no_numeric_column_a_huge_epsilon_and_a_huge_query():
    X = np.random.default_rng(7).normal(size=(300, 2))
    kw = dict(n_layers=0, bounds=(-4.0, 4.0), device="cpu", random_state=0)
    est = DPFlowDensity(epsilon=1e300, **kw).fit(X)  # calibration capped: no overflow
    assert est.epsilon_spent_ <= 1e300
    out = est.score_samples(np.array([[1e308, -1e308], [1e300, 0.0]]))
    assert not np.isnan(out).any() and np.all(out < -1e3)
    # binary columns only: no numeric coordinate, no copula layer and no spend on it
    B = DPFlowDensity(epsilon=1.0, n_layers=1, hidden_size=4, n_iter=3, batch_size=16,
                      device="cpu", random_state=0).fit(X > 0)  # fmt: skip
    assert B.privacy_breakdown_["marginals"] == B.privacy_breakdown_["correlation"] == 0.0


def test_plan_falls_back_to_the_paper_base_where_the_histograms_would_be_noise():
    small = _plan(n=300, epsilon=1.0, n_numeric=9)  # sigma about 100 counts, 38 per bin
    assert small.base == "none" and small.breakdown().keys() == {"bounds", "dpsgd"}
    assert small.delta_dpsgd == small.delta
    large = _plan(n=10_000, epsilon=1.0, n_numeric=9)
    assert large.base == "copula" and large.sigma_marginals <= 0.3 * 10_000 / large.n_bins
    assert _plan(n=300, epsilon=1.0, n_numeric=9, trainable=False).base == "copula"

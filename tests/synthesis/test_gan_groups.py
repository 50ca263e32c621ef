"""DPGANSynthesizer with groups=: the patient (all their rows) as the privacy unit.

Fits, refusals naming the parameter, the spend per patient (the plan's parts add up to
the total, the count sensitivities are k), the critic's per-patient mean, and the
seeding rules (row-level seeds unchanged, the grouping is seed material).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skdp.synthesis import CheckpointSelection, DPGANSynthesizer  # noqa: E402
from skdp.synthesis._gan import _budget  # noqa: E402
from skdp.synthesis._gan._patients import (  # noqa: E402
    per_patient_mean,
    per_patient_weights,
)
from skdp.utils._groups import bound_contributions  # noqa: E402
from tests._fixtures import GAN_FAST  # noqa: E402

K = 3


def _data(n_patients=30, rows=4, seed=0):
    """``rows`` rows per patient (more than K: some are dropped at random)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n_patients * rows, 2))
    y = (X[:, 0] > 0).astype(int)
    groups = np.repeat(np.arange(n_patients), rows)
    return X, y, groups


def _gan(**kw):
    params = {**GAN_FAST, "epsilon": 2.0, "bounds": (-1.0, 1.0), "max_rows_per_group": K}
    return DPGANSynthesizer(**{**params, **kw})


def _fit(est, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(*args, **kw)


def test_patient_level_fit_records_its_unit_and_spends_per_patient():
    X, _, g = _data()
    est = _fit(_gan(batch_size=10), X, groups=g)
    assert est.privacy_unit_ == "group" and est.max_rows_per_group_ == K
    assert est.sample_rate_ == pytest.approx(10 / 30)  # q over patients, not rows
    assert 0 < est.epsilon_spent_ <= 2.0 + 1e-9
    assert sum(est.privacy_breakdown_.values()) == pytest.approx(est.epsilon_spent_)
    assert est.sample(5).shape == (5, 2)
    # the facts are properties: not fitted state of vars(est) (row-level digests)
    assert "privacy_unit_" not in vars(est) and "max_rows_per_group_" not in vars(est)


def test_row_level_fit_records_the_row_unit():
    X, _, _ = _data()
    est = _fit(_gan(max_rows_per_group=None), X)
    assert est.privacy_unit_ == "row" and est.max_rows_per_group_ is None
    with pytest.raises(AttributeError):
        _gan().privacy_unit_  # noqa: B018 - unfitted


def test_conditional_fit_scales_the_count_sensitivities_by_k():
    X, y, g = _data()
    sel = CheckpointSelection(n_checkpoints=3, top_k=2, n_samples=50)
    kw = dict(conditional="acgan", classes=[0, 1], loss="gan", n_iter=4, batch_size=10)
    est = _fit(_gan(checkpoint_selection=sel, **kw), X, y, groups=g)
    eps_prior, eps_sel = 0.05 * 2.0, 0.2 * 2.0
    assert est.privacy_breakdown_["prior"] == pytest.approx(eps_prior)
    assert est.privacy_breakdown_["selection"] == pytest.approx(eps_sel)
    assert est.noise_scale_["prior"] == pytest.approx(K / eps_prior)
    assert est.noise_scale_["selection"] == pytest.approx(K / (eps_sel / 2))
    assert sum(est.privacy_breakdown_.values()) == pytest.approx(est.epsilon_spent_)
    assert est.epsilon_spent_ <= 2.0 + 1e-9
    row = _fit(_gan(checkpoint_selection=sel, max_rows_per_group=None, **kw), X, y)
    assert row.noise_scale_["prior"] == pytest.approx(1 / eps_prior)
    assert est.sample_labeled(4)[0].shape == (4, 2)


def test_the_plan_is_the_only_place_k_multiplies_a_sensitivity():
    plan = _budget.GANPlan(1.0, 1e-5, 0.0, 0.05, 0.2, selection_rounds=4, max_rows_per_group=5)
    assert plan.privacy_unit == "group" and plan.count_sensitivity == 5.0
    assert plan.eps_dpsgd == pytest.approx(0.75)
    assert plan.noise_scales() == pytest.approx(
        {"prior": 5 / 0.05, "selection": 5 / 0.05, "marginals": 0.0}
    )
    row = _budget.GANPlan(1.0, 1e-5, 0.0, 0.05, 0.2, selection_rounds=4)
    assert row.privacy_unit == "row" and row.count_sensitivity == 1.0
    parts = plan.breakdown(0.7)
    assert sum(parts.values()) == pytest.approx(0.95)


def test_an_autoencoder_fit_with_groups_is_per_patient():
    X, _, g = _data()
    est = _fit(_gan(autoencoder=True, n_iter_autoencoder=2, batch_size=10), X, groups=g)
    assert est.n_iter_autoencoder_ == 2 and est.privacy_unit_ == "group"
    assert est.epsilon_spent_ <= 2.0 + 1e-9


def test_non_private_fit_with_groups_and_a_dataframe():
    pd = pytest.importorskip("pandas")
    X, _, g = _data()
    df = pd.DataFrame(X, columns=["a", "b"])
    est = _fit(_gan(epsilon=math.inf), df, groups=[f"p{i}" for i in g])
    assert est.epsilon_spent_ == math.inf and est.privacy_unit_ == "group"
    assert list(est.sample(3).columns) == ["a", "b"]


def test_seeded_patient_fit_is_reproducible_and_depends_on_the_grouping():
    X, _, g = _data()

    def first_weight(groups):
        est = _fit(_gan(n_iter=2), X, groups=groups)
        return next(est.generator_.parameters()).detach().clone()

    a, b = first_weight(g), first_weight(g)
    assert torch.equal(a, b)
    other = np.r_[g[1:], g[:1]]  # another grouping of the same rows
    assert not torch.equal(a, first_weight(other))


@pytest.mark.parametrize(
    "kwargs, groups, match",
    [
        ({"max_rows_per_group": None}, "ok", "max_rows_per_group"),
        ({"bounds": None}, "ok", "bounds"),
        ({"bounds": "private"}, "ok", "bounds"),
        ({}, "short", "groups"),
        ({}, "nan", "groups"),
        ({"max_rows_per_group": 0}, "ok", "max_rows_per_group"),
    ],
)
def test_bad_patient_input_is_refused_naming_the_parameter(kwargs, groups, match):
    X, _, g = _data()
    groups = {"ok": g, "short": g[:-1], "nan": np.where(g == 0, np.nan, g)}[groups]
    with pytest.raises(ValueError, match=match):
        _fit(_gan(**kwargs), X, groups=groups)


def test_unhashable_groups_are_a_type_error_naming_groups():
    X, _, _ = _data(n_patients=2, rows=2)
    with pytest.raises(TypeError, match="groups"):
        _fit(_gan(), X, groups=[{0}, {1}, {0}, {1}])


def test_rows_beyond_k_are_dropped_at_random_not_the_first_k():
    codes = np.repeat(np.arange(200), 4)
    firsts = set()
    for seed in range(20):
        keep = bound_contributions(codes, 1, np.random.default_rng(seed))
        assert len(keep) == 200 and len(np.unique(codes[keep])) == 200
        firsts.add(int(keep[0]))
    assert len(firsts) > 1  # patient 0's kept row varies with the stream


def test_the_critic_term_of_a_patient_is_the_mean_of_their_row_gradients():
    """Engine term (1/k) sum_i w_i g_i with w_i = k / |p| = the patient's mean gradient."""
    from skdp.training import group_clip_and_sum, per_sample_gradients

    codes = np.array([0, 0, 1, 2, 2, 2])
    w = per_patient_weights(codes, 3)
    np.testing.assert_allclose(w, [1.5, 1.5, 3.0, 1.0, 1.0, 1.0])
    lin = torch.nn.Linear(2, 1, bias=False).double()
    x = torch.arange(12, dtype=torch.float64).reshape(6, 2) / 10

    def loss(out):
        return -out[0]

    ps = per_sample_gradients(
        lin, per_patient_mean(loss), x, torch.as_tensor(w), params=dict(lin.named_parameters())
    )
    summed, _, _ = group_clip_and_sum(ps, codes, 3, 1e6, scale=1 / 3)
    means = [-x[codes == p].mean(0) for p in range(3)]
    torch.testing.assert_close(summed["weight"][0], sum(means))

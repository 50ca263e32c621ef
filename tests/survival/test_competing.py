"""Competing risks: make_competing_risks_target and DPAalenJohansen (validation, exact
grouped estimate, agreement with lifelines' AalenJohansenFitter, band, groups)."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skdp.survival import DPAalenJohansen, make_competing_risks_target


def _data(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    t1, t2, tc = rng.exponential(10, n), rng.exponential(20, n), rng.uniform(0, 60, n)
    time = np.minimum(np.minimum(t1, t2), tc)
    event = np.where(tc <= np.minimum(t1, t2), 0, np.where(t1 < t2, 1, 2))
    return make_competing_risks_target(event, time)


def _truth(t):
    """Cause-specific hazards 1/10 and 1/20: F_1 = 2/3 (1 - e^{-0.15 t}), F_2 = F_1 / 2."""
    f1 = (2 / 3) * (1 - np.exp(-0.15 * np.asarray(t)))
    return np.column_stack([f1, f1 / 2])


def test_target():
    y = make_competing_risks_target([0, 1, 2], [1.0, 2.0, 3.0])
    assert y.dtype == np.dtype([("event", np.int64), ("time", np.float64)])
    with pytest.raises(ValueError, match="event must hold integer event types"):
        make_competing_risks_target([0, -1, 2], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="event must hold integer"):
        make_competing_risks_target([0, 1.5, 2], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="time has negative"):
        make_competing_risks_target([0, 1, 2], [1.0, -2.0, 3.0])
    with pytest.raises(ValueError, match="one entry per row"):
        make_competing_risks_target([0, 1], [1.0, 2.0, 3.0])


def test_fit_facts_and_accuracy():
    y = _data()
    aj = DPAalenJohansen(epsilon=1.0, max_time=30.0, random_state=0).fit(y)
    m = aj.time_grid_.size
    assert aj.cumulative_incidence_.shape == (m, 2)
    assert aj.bootstrap_incidence_.shape == (200, m, 2)
    assert (np.diff(aj.cumulative_incidence_, axis=0) >= -1e-12).all()
    total = aj.cumulative_incidence_.sum(axis=1) + aj.survival_function_
    np.testing.assert_allclose(total, 1.0, atol=1e-9)
    at = np.array([5.0, 15.0, 29.0])
    np.testing.assert_allclose(aj.predict(at), _truth(at), atol=0.04)
    band = aj.predict_interval(at)
    assert band.shape == (3, 2, 2) and (band[..., 0] <= band[..., 1]).all()
    assert aj.privacy_breakdown_ == {"histogram": 1.0} and aj.epsilon_spent_ == 1.0
    assert aj.event_types_ == (1, 2)


def test_exact_grouped_estimate_agrees_with_lifelines():
    fitters = pytest.importorskip("lifelines")
    y = _data(2000, seed=1)
    t = np.minimum(y["time"], 30.0)
    e = np.where(y["time"] <= 30.0, y["event"], 0)
    at = np.linspace(1.0, 29.0, 15)
    aj = DPAalenJohansen(epsilon=math.inf, max_time=30.0, n_intervals=600).fit(y)
    for c in (1, 2):
        ref = fitters.AalenJohansenFitter(calculate_variance=False, jitter_level=1e-9)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref.fit(t + 1e-9 * np.arange(t.size), e, event_of_interest=c)
        cif = ref.cumulative_density_
        expected = np.interp(at, cif.index.to_numpy(), cif.iloc[:, 0].to_numpy())
        np.testing.assert_allclose(aj.predict(at)[:, c - 1], expected, atol=0.01)


def test_single_type_matches_one_minus_km():
    from skdp.survival import DPKaplanMeier, make_survival_target

    y = _data(1000, seed=2)
    single = make_competing_risks_target((y["event"] > 0).astype(int), y["time"])
    aj = DPAalenJohansen(epsilon=math.inf, max_time=30.0, event_types=(1,)).fit(single)
    km = DPKaplanMeier(epsilon=math.inf, max_time=30.0).fit(
        make_survival_target(y["event"] > 0, y["time"])
    )
    np.testing.assert_allclose(aj.cumulative_incidence_[:, 0], 1.0 - km.survival_function_)


@pytest.mark.parametrize(
    "params, err, match",
    [
        ({"event_types": (1,)}, ValueError, "event types outside event_types"),
        ({"event_types": (0, 1, 2)}, ValueError, "event_types must list distinct"),
        ({"event_types": (1, 1)}, ValueError, "event_types must list distinct"),
        ({"event_types": ()}, ValueError, "event_types must list"),
        ({"event_types": "12"}, TypeError, "event_types"),
        ({"max_time": None}, ValueError, "max_time is required"),
    ],
)
def test_bad_parameters(params, err, match):
    y = make_competing_risks_target([0, 1, 2], [1.0, 2.0, 3.0])
    with pytest.raises(err, match=match):
        DPAalenJohansen(**{"max_time": 10.0, **params}).fit(y)


def test_bad_target():
    with pytest.raises(TypeError, match="make_competing_risks_target"):
        DPAalenJohansen(max_time=10.0).fit(np.array([1.0, 2.0]))
    y = make_competing_risks_target([0, 1, 2], [1.0, 2.0, 3.0]).astype(
        [("event", float), ("time", float)]
    )
    y["event"][0] = np.nan
    with pytest.raises(ValueError, match="event type"):
        DPAalenJohansen(max_time=10.0).fit(y)


def test_groups_clone_pickle():
    y = _data(300)
    groups = np.arange(300) // 3
    aj = DPAalenJohansen(max_time=30.0, max_rows_per_group=3, random_state=0)
    aj.fit(y, groups=groups)
    assert aj.privacy_unit_ == "group" and aj.noise_scale_ == {"histogram": 3.0}
    back = pickle.loads(pickle.dumps(aj))
    np.testing.assert_array_equal(back.cumulative_incidence_, aj.cumulative_incidence_)
    assert clone(aj).get_params()["event_types"] == (1, 2)


def test_plot():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    aj = DPAalenJohansen(max_time=30.0, random_state=0).fit(_data(500))
    fig, ax = plt.subplots()
    aj.plot(ax=ax)
    assert len(ax.lines) == 2
    plt.close(fig)


@pytest.mark.slow
def test_band_covers_the_true_incidence():
    covered = []
    for r in range(30):
        aj = DPAalenJohansen(epsilon=1.0, max_time=30.0, random_state=r)
        aj.fit(_data(2000, seed=300 + r))
        e = aj.time_grid_[1:]
        band = aj.predict_interval(e)
        truth = _truth(e)
        covered.append(np.mean((band[..., 0] <= truth) & (truth <= band[..., 1])))
    assert np.mean(covered) >= 0.93, np.mean(covered)

"""DPKaplanMeier: validation, the fitted facts, agreement with a reference Kaplan--Meier
(numpy here; lifelines where installed), clone/pickle, the band's coverage."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from sklearn.base import clone

from skdp.survival import DPKaplanMeier, make_survival_target
from skdp.survival._histogram import default_n_intervals


def _data(n=2000, seed=0, scale=10.0, shape=1.5, censor=30.0):
    rng = np.random.default_rng(seed)
    te = scale * rng.weibull(shape, n)
    tc = rng.uniform(0, censor, n)
    return make_survival_target(te <= tc, np.minimum(te, tc))


def reference_km(event, time, at):
    """The exact product-limit estimator at the times ``at`` (numpy)."""
    event, time = np.asarray(event, bool), np.asarray(time, float)
    out = []
    for t in np.atleast_1d(at):
        s = 1.0
        for u in np.unique(time[event & (time <= t)]):
            s *= 1.0 - np.sum(event & (time == u)) / np.sum(time >= u)
        out.append(s)
    return np.array(out)


def test_fit_facts_and_shapes():
    y = _data()
    km = DPKaplanMeier(epsilon=1.0, max_time=20.0, n_intervals=40, random_state=0).fit(y)
    assert km.time_grid_.shape == (41,) and km.survival_function_.shape == (41,)
    assert km.survival_function_[0] == 1.0
    assert (np.diff(km.survival_function_) <= 0).all()
    assert (np.diff(km.cumulative_hazard_) >= 0).all()
    assert km.epsilon_spent_ == 1.0 and km.delta_spent_ == 0.0
    assert km.privacy_breakdown_ == {"histogram": 1.0}
    assert km.privacy_guarantee_ == "exact" and km.privacy_unit_ == "row"
    assert km.max_rows_per_group_ is None and km.noise_scale_ == {"histogram": 1.0}
    band = km.predict_interval([0.0, 5.0, 19.0])
    assert band.shape == (3, 2) and (band[:, 0] <= band[:, 1]).all()
    s = km.predict([5.0, 10.0])
    truth = np.exp(-((np.array([5.0, 10.0]) / 10) ** 1.5))
    np.testing.assert_allclose(s, truth, atol=0.04)
    assert math.isclose(km.median_survival_time_, 10 * math.log(2) ** (1 / 1.5), abs_tol=1.0)
    assert isinstance(km.predict(3.0), float)
    h = km.predict_cumulative_hazard([10.0])
    assert abs(h[0] - 1.0) < 0.15


def test_step_function_and_default_grid():
    y = _data(500)
    km = DPKaplanMeier(epsilon=2.0, max_time=20.0, random_state=1).fit(y)
    assert km.time_grid_.size == default_n_intervals(2.0) + 1
    e = km.time_grid_
    mid = (e[3] + e[4]) / 2
    assert km.predict(mid) == km.survival_function_[3] == km.predict(e[3])
    assert default_n_intervals(1.0) == 40 and default_n_intervals(0.01) == 10
    assert default_n_intervals(math.inf) == 100


def test_exact_at_infinite_epsilon_matches_reference():
    """With a grid holding every distinct time the grouped estimate is the
    Kaplan--Meier curve up to the life-table half-weight of censored rows; with a fine
    grid the two agree closely everywhere."""
    y = _data(1500, seed=3)
    km = DPKaplanMeier(epsilon=math.inf, max_time=20.0, n_intervals=400, n_bootstrap=0).fit(y)
    at = np.linspace(0.5, 19.5, 25)
    ref = reference_km(y["event"], np.minimum(y["time"], 20.0), at)
    np.testing.assert_allclose(km.predict(at), ref, atol=0.012)
    assert km.epsilon_spent_ == math.inf and km.privacy_guarantee_ == "none"
    np.testing.assert_array_equal(km.predict_interval(at)[:, 0], km.predict(at))


def test_agrees_with_lifelines_at_large_epsilon():
    lifelines = pytest.importorskip("lifelines")
    y = _data(3000, seed=4)
    t = np.minimum(y["time"], 20.0)
    e = y["event"] & (y["time"] <= 20.0)
    ref = lifelines.KaplanMeierFitter().fit(t, e)
    at = np.linspace(0.5, 19.5, 30)
    for eps in (math.inf, 1e4):
        km = DPKaplanMeier(epsilon=eps, max_time=20.0, n_intervals=400, random_state=0)
        km.fit(y)
        np.testing.assert_allclose(
            km.predict(at), ref.survival_function_at_times(at).to_numpy(), atol=0.015
        )


def test_times_past_the_horizon_are_censored_there():
    y = make_survival_target([True, True, False, True], [1.0, 2.0, 3.0, 50.0])
    km = DPKaplanMeier(epsilon=math.inf, max_time=10.0, n_intervals=10).fit(y)
    assert km.predict(10.0) == pytest.approx(0.5)  # the row at 50 counts as censored


def test_reproducible_with_a_seed_and_fresh_without():
    y = _data(300)
    a = DPKaplanMeier(max_time=20.0, random_state=7).fit(y).survival_function_
    b = DPKaplanMeier(max_time=20.0, random_state=7).fit(y).survival_function_
    c = DPKaplanMeier(max_time=20.0, random_state=8).fit(y).survival_function_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    d = DPKaplanMeier(max_time=20.0).fit(y).survival_function_
    e = DPKaplanMeier(max_time=20.0).fit(y).survival_function_
    assert not np.array_equal(d, e)


def test_clone_and_pickle_hold_no_generator():
    y = _data(300)
    km = DPKaplanMeier(max_time=20.0, random_state=np.random.default_rng(0)).fit(y)
    assert clone(km).get_params()["max_time"] == 20.0
    back = pickle.loads(pickle.dumps(km))
    assert back.random_state is None
    np.testing.assert_array_equal(back.survival_function_, km.survival_function_)
    for value in vars(back).values():
        assert not isinstance(value, (np.random.Generator, np.random.SeedSequence))


@pytest.mark.parametrize(
    "params, y_kind, err, match",
    [
        ({}, "ok", ValueError, "max_time is required"),
        ({"max_time": -1.0}, "ok", ValueError, "max_time"),
        ({"max_time": 10.0, "epsilon": 0.0}, "ok", ValueError, "epsilon"),
        ({"max_time": 10.0, "n_intervals": 0}, "ok", ValueError, "n_intervals"),
        ({"max_time": 10.0, "time_grid": [3, 2]}, "ok", ValueError, "time_grid"),
        ({"max_time": 10.0, "time_grid": [2, 5], "n_intervals": 4}, "ok", ValueError, "not both"),
        ({"max_time": 10.0}, "plain", TypeError, "structured array"),
        ({"max_time": 10.0}, "negative", ValueError, "negative times"),
        ({"max_time": 10.0}, "nan", ValueError, "NaN"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(params, y_kind, err, match):
    y = make_survival_target([True, False, True], [1.0, 2.0, 3.0])
    if y_kind == "plain":
        y = np.array([1.0, 2.0, 3.0])
    elif y_kind in ("negative", "nan"):
        y = y.copy()
        y["time"][1] = -4.0 if y_kind == "negative" else np.nan
    with pytest.raises(err, match=match):
        DPKaplanMeier(**params).fit(y)


def test_predict_refuses_times_beyond_the_horizon_and_bad_alpha():
    km = DPKaplanMeier(max_time=20.0, random_state=0).fit(_data(200))
    with pytest.raises(ValueError, match="within \\[0, max_time\\]"):
        km.predict([25.0])
    with pytest.raises(ValueError, match="times must lie"):
        km.predict_interval([-1.0])
    with pytest.raises(ValueError, match="alpha"):
        km.predict_interval([1.0], alpha=1.5)


def test_groups_need_a_bound_and_scale_the_noise():
    y = _data(300)
    groups = np.repeat(np.arange(100), 3)
    with pytest.raises(ValueError, match="max_rows_per_group"):
        DPKaplanMeier(max_time=20.0).fit(y, groups=groups)
    km = DPKaplanMeier(epsilon=1.0, max_time=20.0, max_rows_per_group=2, random_state=0)
    km.fit(y, groups=groups)
    assert km.privacy_unit_ == "group" and km.max_rows_per_group_ == 2
    assert km.noise_scale_ == {"histogram": 2.0} and km.epsilon_spent_ == 1.0
    with pytest.raises(ValueError, match="groups has 5 labels for 300 rows"):
        km.fit(y, groups=np.arange(5))


def test_bounding_keeps_at_most_k_rows_per_patient():
    # 50 patients with 4 rows each, every row an event in the first interval
    y = make_survival_target(np.ones(200, bool), np.full(200, 0.5))
    km = DPKaplanMeier(epsilon=math.inf, max_time=10.0, n_intervals=10, max_rows_per_group=2)
    km.fit(y, groups=np.repeat(np.arange(50), 4))
    assert km.at_risk_[0] == 100


def test_plot_draws_curve_and_band():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    km = DPKaplanMeier(max_time=20.0, random_state=0).fit(_data(300))
    fig, ax = plt.subplots()
    assert km.plot(ax=ax) is ax
    assert len(ax.lines) == 1 and len(ax.collections) == 1
    plt.close(fig)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon, n", [(1.0, 2000), (1.0, 500), (0.3, 1000)])
def test_band_covers_the_true_curve(epsilon, n):
    """Pointwise coverage of the known Weibull curve by the 95 % band, averaged over
    the grid and 40 simulated studies: at least 93 %."""
    covered = []
    for r in range(40):
        y = _data(n, seed=100 + r)
        km = DPKaplanMeier(epsilon=epsilon, max_time=20.0, random_state=r).fit(y)
        e = km.time_grid_[1:]
        truth = np.exp(-((e / 10.0) ** 1.5))
        band = km.predict_interval(e)
        covered.append(np.mean((band[:, 0] <= truth) & (truth <= band[:, 1])))
    assert np.mean(covered) >= 0.93, np.mean(covered)


def test_dask_input_is_counted_on_the_workers():
    dd = pytest.importorskip("dask.dataframe")
    da = pytest.importorskip("dask.array")
    import pandas as pd

    y = _data(900, seed=9)
    frame = dd.from_pandas(pd.DataFrame({"event": y["event"], "time": y["time"]}), npartitions=3)
    ref = DPKaplanMeier(epsilon=math.inf, max_time=20.0).fit(y).survival_function_
    for lazy in (frame, da.from_array(y, chunks=250)):
        km = DPKaplanMeier(epsilon=math.inf, max_time=20.0).fit(lazy)
        np.testing.assert_array_equal(km.survival_function_, ref)
    private = DPKaplanMeier(epsilon=1.0, max_time=20.0, random_state=0).fit(frame)
    assert private.epsilon_spent_ == 1.0
    with pytest.raises(ValueError, match="not supported for Dask input by skdp.survival"):
        DPKaplanMeier(max_time=20.0, max_rows_per_group=2).fit(frame, groups=np.arange(900))


def test_interpolate_is_linear_between_edges():
    km = DPKaplanMeier(epsilon=math.inf, max_time=20.0, n_intervals=10).fit(_data(800))
    e, s = km.time_grid_, km.survival_function_
    mid = (e[2] + e[3]) / 2
    assert km.predict(mid, interpolate=True) == pytest.approx((s[2] + s[3]) / 2)
    np.testing.assert_allclose(km.predict(e, interpolate=True), s)
    assert km.predict_interval([mid], interpolate=True).shape == (1, 2)


def test_a_noisy_tail_does_not_flatten_the_curve():
    """The AIDS trial (scikit-survival): few events, a thin tail. Projecting the
    cumulative hazard let the tail's huge noisy steps pool the whole curve (S = 1
    everywhere for 2 of these 20 seeds, error up to 0.10 against the non-private
    curve); the cumulative event counts are projected instead (error <= 0.03)."""
    datasets = pytest.importorskip("sksurv.datasets")
    _, aids = datasets.load_aids()
    event, time = aids["censor"], aids["time"]
    y = make_survival_target(event, time)
    ref = reference_km(event & (time <= 360), np.minimum(time, 360.0), [300.0])[0]
    for seed in range(20):
        km = DPKaplanMeier(epsilon=1.0, max_time=360.0, n_bootstrap=0, random_state=seed)
        assert abs(km.fit(y).predict(300.0) - ref) < 0.04


def test_band_at_infinite_epsilon_is_greenwood_like():
    lifelines = pytest.importorskip("lifelines")
    y = _data(800, seed=11)
    km = DPKaplanMeier(epsilon=math.inf, max_time=20.0, random_state=0).fit(y)
    ref = lifelines.KaplanMeierFitter().fit(
        np.minimum(y["time"], 20.0), y["event"] & (y["time"] <= 20.0)
    )
    at = [5.0, 10.0, 15.0]
    ci = ref.confidence_interval_survival_function_.reindex(at, method="ffill").to_numpy()
    band = km.predict_interval(at)
    np.testing.assert_allclose(band[:, 1] - band[:, 0], ci[:, 1] - ci[:, 0], atol=0.02)

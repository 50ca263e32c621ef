"""The count-based synthesizers per patient (fit(X, groups=), max_rows_per_group) and the
marginal synthesizer's secure_mode."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.synthesis import DPHistogramSynthesizer, DPMarginalSynthesizer
from skdp.synthesis._histogram_cells import noise_mass
from skdp.synthesis._histogram_plan import HistogramPlan
from skdp.synthesis._marginal_plan import MarginalPlan

META = {
    "bounds": {"a": (0, 4), "c": (0.0, 1.0)},
    "column_types": {"a": "integer"},
    "categories": {"b": ["x", "y"]},
}
N_PATIENTS, ROWS = 100, 3


def _table(seed=0):
    rng = np.random.default_rng(seed)
    n = N_PATIENTS * ROWS
    X = pd.DataFrame(
        {"a": rng.integers(0, 5, n), "b": rng.choice(["x", "y"], n), "c": rng.uniform(0, 1, n)}
    )
    return X, np.repeat(np.arange(N_PATIENTS), ROWS)


SYNTHS = {
    "histogram": lambda **kw: DPHistogramSynthesizer(epsilon=1.0, **META, **kw),
    "mst": lambda **kw: DPMarginalSynthesizer(epsilon=1.0, selection="mst", **META, **kw),
    "aim": lambda **kw: DPMarginalSynthesizer(epsilon=1.0, selection="aim", **META, **kw),
}


@pytest.mark.parametrize("name", sorted(SYNTHS))
def test_patient_level_fit_records_the_unit_and_samples_rows(name):
    X, g = _table()
    est = SYNTHS[name](max_rows_per_group=2, random_state=0).fit(X, groups=g)
    assert est.privacy_unit_ == "group" and est.max_rows_per_group_ == 2
    assert est.epsilon_spent_ == 1.0
    fake = est.sample(50, random_state=0)
    assert list(fake.columns) == list(X.columns) and len(fake) == 50
    row = SYNTHS[name](random_state=0).fit(X)
    assert row.privacy_unit_ == "row" and row.max_rows_per_group_ is None
    # the privacy facts are per patient: the same budget, k times the noise
    assert est.privacy_breakdown_ == pytest.approx(row.privacy_breakdown_)
    for key, scale in row.noise_scale_.items():
        if name != "aim" or key == "one_way":  # (AIM's 2-way: of its first round)
            assert est.noise_scale_[key] == pytest.approx(2 * scale, rel=1e-5)


def test_unfitted_estimator_has_no_privacy_unit():
    assert not hasattr(DPHistogramSynthesizer(), "privacy_unit_")
    assert not hasattr(DPMarginalSynthesizer(), "max_rows_per_group_")


@pytest.mark.parametrize("k", [None, 1, 3])
@pytest.mark.parametrize("mechanism", ["geometric", "laplace"])
def test_histogram_plan_multiplies_the_sensitivity_once(k, mechanism):
    kw = dict(
        epsilon=2.0,
        eps_bounds=0.0,
        groups=[["a"], ["b"]],
        uniform=[],
        n_public=500,
        threshold=0.5,
        mechanism=mechanism,
        secure_mode=False,
    )
    row = HistogramPlan.build(**kw)
    plan = HistogramPlan.build(**kw, max_rows_per_group=k)
    f = 1 if k is None else k
    assert plan.sensitivity == f and plan.eps_group == row.eps_group == 1.0
    assert plan.threshold == pytest.approx(f * row.threshold)
    assert plan.noise_scale == pytest.approx(f * row.noise_scale, rel=1e-5)
    assert plan.breakdown() == row.breakdown()
    # the noise-only mass per count: k times the row's for the continuous noise (the
    # discrete noise's threshold rounds to an integer count)
    mass = noise_mass(1000, 1.0 / f, plan.threshold, mechanism=mechanism, secure_mode=False)
    assert plan.noise_mass(1000) == mass
    if mechanism == "laplace":
        assert plan.noise_mass(1000) == pytest.approx(f * row.noise_mass(1000), rel=1e-9)


@pytest.mark.parametrize("selection", ["mst", "aim"])
@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_marginal_plan_multiplies_every_sensitivity_once(selection, delta):
    kw = dict(
        epsilon=1.0,
        delta=delta,
        eps_bounds=0.0,
        n_columns=4,
        share=np.full(3, 1 / 3),
        selection=selection,
        n_public=1000,
    )
    row, plan = MarginalPlan.build(**kw), MarginalPlan.build(**kw, max_rows_per_group=4)
    assert plan.sensitivity == plan.score_sensitivity == 4.0
    assert row.sensitivity == row.score_sensitivity == 1.0
    for attr in ("one_way_scale", "two_way_scale", "two_way_sd", "one_way_sd"):
        assert getattr(plan, attr) == pytest.approx(4 * getattr(row, attr))
    assert plan.select_epsilon == row.select_epsilon
    assert plan.breakdown() == row.breakdown()
    assert plan.rho_breakdown() == row.rho_breakdown()
    e_row, s_row, _ = row.round_noise(0.01)
    e_pat, s_pat, _ = plan.round_noise(0.01)
    assert e_pat == e_row and s_pat == pytest.approx(4 * s_row)


@pytest.mark.parametrize("name", sorted(SYNTHS))
def test_groups_without_a_bound_is_refused(name):
    X, g = _table()
    with pytest.raises(ValueError, match="max_rows_per_group"):
        SYNTHS[name](random_state=0).fit(X, groups=g)


@pytest.mark.parametrize("name", sorted(SYNTHS))
@pytest.mark.parametrize("bad", [np.arange(5), [None] * 300])
def test_bad_groups_are_refused_naming_the_parameter(name, bad):
    X, _ = _table()
    with pytest.raises(ValueError, match="groups"):
        SYNTHS[name](max_rows_per_group=2).fit(X, groups=bad)


@pytest.mark.parametrize("cls", [DPHistogramSynthesizer, DPMarginalSynthesizer])
def test_a_private_bound_estimate_is_refused_with_groups(cls):
    X, g = _table()
    est = cls(
        categories=META["categories"],
        column_types=META["column_types"],
        bounds={"a": (0, 4)},
        max_rows_per_group=2,
    )
    with pytest.raises(ValueError, match=r"\['c'\].*groups="):
        est.fit(X, groups=g)


def _released(est):
    """The noisy counts a fit released (histogram cells, or the 1-way marginals)."""
    if isinstance(est, DPHistogramSynthesizer):
        return [est.histograms_[0]["cells"], est.histograms_[0]["counts"]]
    return [est.noisy_one_way_[c] for c in sorted(est.noisy_one_way_)]


@functools.cache
def _in_memory_release(name):
    """The in-memory fit's released counts without noise (one fit per synthesizer, shared
    by the three label containers below, which only read them)."""
    X, g = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = SYNTHS[name](max_rows_per_group=ROWS, random_state=0).set_params(epsilon=np.inf)
        mem.fit(X, groups=g)
    return _released(mem)


@pytest.mark.parametrize("name", sorted(SYNTHS))
@pytest.mark.parametrize("labels", ["numpy", "dask-array", "dask-series"])
def test_dask_input_is_bounded_on_the_workers(name, labels):
    """Without noise and with no patient over k, the Dask fit releases the in-memory
    counts; with k = 1 each patient keeps one row."""
    dd = pytest.importorskip("dask.dataframe")
    import dask.array as da

    X, g = _table()
    dx = dd.from_pandas(X, npartitions=3)
    groups = {
        "numpy": g,
        "dask-array": da.from_array(g, chunks=100),
        "dask-series": dd.from_pandas(pd.Series(g), npartitions=3),
    }[labels]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = SYNTHS[name](max_rows_per_group=ROWS, random_state=0).set_params(epsilon=np.inf)
        est.fit(dx, groups=groups)
        one = SYNTHS[name](max_rows_per_group=1, random_state=0).set_params(epsilon=np.inf)
        one.fit(dx, groups=groups)
    for a, b in zip(_released(est), _in_memory_release(name), strict=True):
        np.testing.assert_array_equal(a, b)
    assert est.privacy_unit_ == "group" and est.max_rows_per_group_ == ROWS
    assert sum(float(np.sum(v)) for v in _released(one)[-1:]) == N_PATIENTS


@pytest.mark.parametrize("cls", [DPHistogramSynthesizer, DPMarginalSynthesizer])
def test_dask_patient_level_release_ignores_row_order_and_partitions(cls):
    dd = pytest.importorskip("dask.dataframe")
    X, g = _table()
    perm = np.random.default_rng(1).permutation(len(X))
    Xp, gp = X.iloc[perm].reset_index(drop=True), g[perm]

    def fit(frame, groups, parts):
        est = cls(**META, max_rows_per_group=1, random_state=4)
        return est.fit(dd.from_pandas(frame, npartitions=parts), groups=groups)

    a, b = fit(X, g, 3), fit(Xp, gp, 2)
    for u, v in zip(_released(a), _released(b), strict=True):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("cls", [DPHistogramSynthesizer, DPMarginalSynthesizer])
def test_dask_groups_beside_in_memory_data_are_refused(cls):
    pytest.importorskip("dask.dataframe")
    import dask.array as da

    X, g = _table()
    with pytest.raises(ValueError, match="groups"):
        cls(**META, max_rows_per_group=2).fit(X, groups=da.from_array(g, chunks=100))


@pytest.mark.parametrize("name", sorted(SYNTHS))
@pytest.mark.parametrize("dask", [False, True])
def test_clip_false_refusal_does_not_depend_on_the_rows_kept(name, dask):
    """One patient has an out-of-bounds row among 10: refused whatever rows k = 1 keeps."""
    X, g = _table()
    X.loc[0:9, "c"] = 0.5
    X.loc[5, "c"] = 7.0  # out of the declared bounds
    g = g.copy()
    g[:10] = 999
    if dask:
        X = pytest.importorskip("dask.dataframe").from_pandas(X, npartitions=3)
    for seed in range(3 if dask else 5):
        with pytest.raises(ValueError, match="bounds|outside"):
            SYNTHS[name](max_rows_per_group=1, clip=False, random_state=seed).fit(X, groups=g)


@pytest.mark.parametrize("name", sorted(SYNTHS))
def test_patient_level_release_is_reproducible_and_depends_on_the_grouping(name):
    X, g = _table()

    def fit(groups):
        return SYNTHS[name](max_rows_per_group=1, random_state=3).fit(X, groups=groups)

    a, b = fit(g), fit(g)
    assert a.sample(20, random_state=0).equals(b.sample(20, random_state=0))
    other = fit(np.arange(len(X)) % N_PATIENTS)  # the same rows, another grouping
    assert not a.sample(200, random_state=0).equals(other.sample(200, random_state=0))


def test_rows_beyond_k_are_dropped_at_random_not_the_first_k():
    """One patient with 40 rows, 20 in level "x" first, then 20 in "y": with k = 20 and
    no noise (epsilon = inf) the kept rows mix both levels (the first 20 would be "x")."""
    X = pd.DataFrame({"b": ["x"] * 20 + ["y"] * 20})
    g = np.zeros(40, dtype=int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPHistogramSynthesizer(
            epsilon=np.inf, categories={"b": ["x", "y"]}, max_rows_per_group=20, random_state=0
        ).fit(X, groups=g)
    counts = dict(zip(est.histograms_[0]["cells"], est.histograms_[0]["counts"], strict=True))
    assert sum(counts.values()) == 20 and len(counts) == 2


# ------------------------------------------------------------------ secure_mode


def test_marginal_secure_mode_default_is_left_out_of_the_seed():
    X, _ = _table()
    a = DPMarginalSynthesizer(**META, random_state=0).fit(X)
    b = DPMarginalSynthesizer(**META, secure_mode=False, random_state=0).fit(X)
    for c in a.noisy_one_way_:
        np.testing.assert_array_equal(a.noisy_one_way_[c], b.noisy_one_way_[c])


@pytest.mark.parametrize("selection", ["mst", "aim"])
@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_marginal_secure_mode_draws_the_noise_from_os_entropy(selection, delta, monkeypatch):
    import skdp.mechanisms._discrete as discrete

    calls = []
    real = discrete.random_source

    def spy(rng=None, *, secure_mode=False):
        calls.append(secure_mode)
        return real(rng, secure_mode=secure_mode)

    monkeypatch.setattr(discrete, "random_source", spy)
    X, _ = _table()
    kw = dict(**META, selection=selection, delta=delta, secure_mode=True, random_state=0)
    a, b = DPMarginalSynthesizer(**kw).fit(X), DPMarginalSynthesizer(**kw).fit(X)
    assert calls and all(calls)  # every noise draw of the fits was secure
    same = all(np.array_equal(a.noisy_one_way_[c], b.noisy_one_way_[c]) for c in a.noisy_one_way_)
    assert not same  # the same seed no longer fixes the noise
    assert a.epsilon_spent_ == 1.0 and a.privacy_guarantee_ == "exact"

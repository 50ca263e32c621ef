"""``DPMarginalSynthesizer(contribution="clip")``: per-patient L2 clipping of the
Gaussian measurements of a patient-level fit."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.synthesis import DPMarginalSynthesizer

CATS = {"a": ["x", "y", "z"], "b": ["p", "q"], "c": ["u", "v"]}


def _table(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.choice(CATS["a"], 4 * n),
            "b": rng.choice(CATS["b"], 4 * n),
            "c": np.repeat(rng.choice(CATS["c"], n), 4),  # constant within a patient
        }
    )
    return X, np.repeat(np.arange(n), 4)


def _fit(contribution, groups=True, **kw):
    X, g = _table()
    params = dict(epsilon=1.0, delta=1e-5, categories=CATS, random_state=0)
    params.update(max_rows_per_group=4 if groups else None, contribution=contribution, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPMarginalSynthesizer(**params).fit(X, groups=g if groups else None)


@pytest.mark.parametrize("selection", ["mst", "aim"])
def test_clip_divides_the_measurements_noise_by_sqrt_k(selection):
    sample, clip = _fit("sample", selection=selection), _fit("clip", selection=selection)
    assert clip.noise_scale_["one_way"] == sample.noise_scale_["one_way"]
    assert clip.noise_scale_["two_way"] == pytest.approx(sample.noise_scale_["two_way"] / 2)
    assert (clip.epsilon_spent_, clip.delta_spent_) == (1.0, 1e-5)
    assert clip.rho_breakdown_ == sample.rho_breakdown_
    assert clip.privacy_unit_ == "group" and clip.max_rows_per_group_ == 4
    assert clip.sample(50, random_state=0).shape == (50, 3)


@pytest.mark.parametrize("selection", ["mst", "aim"])
def test_clip_without_groups_or_under_pure_dp_changes_nothing(selection, monkeypatch):
    for kw in ({"groups": False}, {"delta": 0.0}):
        a = _fit("sample", selection=selection, **kw)
        # the parameter is seed material: draw the default's noise to compare releases
        later = {**DPMarginalSynthesizer._later_parameters, "contribution": "clip"}
        monkeypatch.setattr(DPMarginalSynthesizer, "_later_parameters", later)
        b = _fit("clip", selection=selection, **kw)
        monkeypatch.undo()
        assert a.noise_scale_ == b.noise_scale_
        for c in CATS:
            np.testing.assert_array_equal(a.noisy_one_way_[c], b.noisy_one_way_[c])
        pd.testing.assert_frame_equal(a.sample(30, random_state=1), b.sample(30, random_state=1))


def test_clip_under_pure_dp_with_groups_warns_and_without_groups_does_not():
    X, g = _table(50)
    params = dict(epsilon=1.0, categories=CATS, contribution="clip", random_state=0)
    est = DPMarginalSynthesizer(delta=0.0, max_rows_per_group=4, **params)
    with pytest.warns(UserWarning, match="contribution='clip' applies to zCDP fits"):
        est.fit(X, groups=g)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        DPMarginalSynthesizer(delta=1e-5, max_rows_per_group=4, **params).fit(X, groups=g)
        DPMarginalSynthesizer(delta=1e-5, **params).fit(X)


def test_clip_keeps_the_proportions_of_a_clipped_marginal():
    # without noise-dominated cells: a large table, epsilon 10
    X, g = _table(n=2000, seed=1)
    est = DPMarginalSynthesizer(
        epsilon=10.0, delta=1e-5, categories=CATS, selection="mst", compress=False,
        max_rows_per_group=4, contribution="clip", random_state=0,
    ).fit(X, groups=g)  # fmt: skip
    for (u, v), y in est.noisy_two_way_.items():
        exact = pd.crosstab(X[u], X[v]).reindex(index=CATS[u], columns=CATS[v]).to_numpy()
        assert np.abs(y / y.sum() - exact / exact.sum()).max() < 0.02
        # brought back to about the row total (each patient weighs at least 1/2 here)
        assert y.sum() == pytest.approx(len(X), rel=0.1)


def test_bad_contribution_is_refused_by_name():
    with pytest.raises(ValueError, match="contribution"):
        _fit("weight")


@pytest.mark.slow
def test_dask_input_with_clip_is_refused_by_name():
    dd = pytest.importorskip("dask.dataframe")
    X, g = _table(50)
    est = DPMarginalSynthesizer(
        epsilon=1.0, categories=CATS, max_rows_per_group=4, contribution="clip", random_state=0
    )
    with pytest.raises(ValueError, match="contribution"):
        est.fit(dd.from_pandas(X, npartitions=2), groups=g)


def test_resolution_noise_is_in_count_units():
    est = _fit("clip", selection="mst")
    sd = est.noise_scale_["two_way"]
    assert math.isfinite(sd) and sd > 0
    for y in est.noisy_two_way_.values():
        assert np.isfinite(y).all()

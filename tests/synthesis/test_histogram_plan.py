"""DPHistogramSynthesizer's release plan and fitted vocabulary (doc/glossary.rst):
``HistogramPlan`` is built from public inputs only and is the only source of
``privacy_breakdown_``, ``epsilon_spent_`` and ``noise_scale_``; the breakdown keys are
snake_case (``"histogram"``, or ``"histogram_1"``, ... in projection order); the noise is
chosen with ``mechanism=`` (``noise=`` is its deprecated name)."""

from __future__ import annotations

import dataclasses
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from skdp.synthesis import DPHistogramSynthesizer
from skdp.synthesis._histogram_plan import HistogramPlan, part_names

BOUNDS = {"age": (18, 90), "bmi": (15.0, 50.0)}
CATS = {"sex": ["F", "M"], "blood": ["A", "B", "AB", "O"]}
COLUMNS = ["age", "sex", "bmi", "blood"]


def _frame(n=800, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 85, size=n)
    return pd.DataFrame(
        {
            "age": age,
            "sex": rng.choice(["F", "M"], size=n),
            "bmi": np.clip(rng.normal(22 + age / 10, 3), 15, 50),
            "blood": rng.choice(["A", "B", "AB", "O"], size=n),
        }
    )


def _params(**kw):
    params = {
        "epsilon": 1.0,
        "bounds": BOUNDS,
        "categories": CATS,
        "column_types": {"age": "integer"},
        "random_state": 0,
    }
    return {**params, **kw}


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"projections": [["age", "bmi"], ["sex"], ["blood"]], "epsilon": 2.0},
        {"projections": [["bmi", "blood"]]},  # age and sex drawn uniformly
        {"mechanism": "laplace"},
        {"mechanism": "laplace", "secure_mode": True, "epsilon": 0.7},
        {"epsilon": math.inf},
        {"n_public": 5000, "threshold": 1.5, "epsilon": 0.3},
        {"bounds": "private", "epsilon": 3.0, "projections": [["age"], ["bmi"]]},
    ],
)
def test_privacy_facts_come_from_the_plan_alone(kw):
    """A plan built without the rows (the budget, the bounds' public share, the
    projections, the public n and the parameters) gives the fitted facts, and its
    breakdown sums to epsilon."""
    df = _frame()
    params = _params(**kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the "private" opt-in's BoundsEstimateWarning
        est = DPHistogramSynthesizer(**params).fit(df)
    groups = params.get("projections") or [COLUMNS]
    listed = {c for g in groups for c in g}
    plan = HistogramPlan.build(
        epsilon=params["epsilon"],
        eps_bounds=est.privacy_breakdown_["bounds"],  # a public fraction of epsilon
        groups=groups,
        uniform=[c for c in COLUMNS if c not in listed],
        n_public=params.get("n_public") or len(df),
        threshold=params.get("threshold", 0.5),
        mechanism=params.get("mechanism", "geometric"),
        secure_mode=params.get("secure_mode", False),
    )
    assert plan.breakdown() == est.privacy_breakdown_
    assert list(plan.breakdown()) == list(est.privacy_breakdown_)
    assert plan.noise_scales() == est.noise_scale_
    assert plan.epsilon_spent == est.epsilon_spent_
    assert est.uniform_columns_ == list(plan.uniform)
    for h, part in zip(est.histograms_, plan.parts, strict=True):
        assert h["epsilon"] == plan.eps_group == est.privacy_breakdown_[part]
        assert h["threshold"] == plan.threshold
        assert tuple(h["columns"]) == plan.groups[plan.parts.index(part)]
    if math.isfinite(params["epsilon"]):
        assert math.fsum(plan.breakdown().values()) == pytest.approx(params["epsilon"], rel=1e-12)
    if params.get("bounds") == "private":
        assert est.privacy_breakdown_["bounds"] == pytest.approx(0.1 * params["epsilon"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.eps_group = 1.0


def test_breakdown_keys_name_the_histograms_in_projection_order():
    df = _frame()
    one = DPHistogramSynthesizer(**_params()).fit(df)
    assert list(one.privacy_breakdown_) == ["bounds", "histogram"]
    assert list(one.noise_scale_) == ["histogram"]
    groups = [["bmi"], ["age", "sex"], ["blood"]]
    several = DPHistogramSynthesizer(**_params(projections=groups, epsilon=3.0)).fit(df)
    parts = ["histogram_1", "histogram_2", "histogram_3"]
    assert list(several.privacy_breakdown_) == ["bounds", *parts]
    assert list(several.noise_scale_) == parts
    # "histogram_i" is histograms_[i - 1], the i-th projection
    for i, part in enumerate(parts, start=1):
        assert several.histograms_[i - 1]["columns"] == groups[i - 1]
        assert several.privacy_breakdown_[part] == several.histograms_[i - 1]["epsilon"]
    assert part_names(1) == ["histogram"] and part_names(3) == parts


def test_old_breakdown_keys_read_with_a_future_warning():
    df = _frame()
    est = DPHistogramSynthesizer(**_params(projections=[["age", "bmi"], ["sex"]])).fit(df)
    with pytest.warns(FutureWarning, match=r"privacy_breakdown_\['histogram_2'\]"):
        assert est.privacy_breakdown_["histogram('sex',)"] == est.privacy_breakdown_["histogram_2"]
    assert "histogram('sex',)" not in est.privacy_breakdown_  # the new keys only
    with pytest.raises(KeyError):
        est.privacy_breakdown_["histogram_3"]
    again = pickle.loads(pickle.dumps(est))
    with pytest.warns(FutureWarning):
        assert again.privacy_breakdown_["histogram('age', 'bmi')"] == 0.5
    one = DPHistogramSynthesizer(**_params()).fit(df)
    with pytest.warns(FutureWarning, match=r"\['histogram'\]"):
        assert one.privacy_breakdown_["histogram('age', 'sex', 'bmi', 'blood')"] == 1.0


def test_noise_scale_is_the_scale_of_the_cell_noise():
    df = _frame()
    groups = [["age", "bmi"], ["sex", "blood"]]
    geo = DPHistogramSynthesizer(**_params(projections=groups)).fit(df)
    assert geo.noise_scale_ == {"histogram_1": 2.0, "histogram_2": 2.0}  # 1 / 0.5, exact
    lap = DPHistogramSynthesizer(**_params(mechanism="laplace", epsilon=0.3)).fit(df)
    assert lap.noise_scale_ == {"histogram": 1.0 / 0.3}
    sec = DPHistogramSynthesizer(**_params(mechanism="laplace", secure_mode=True, epsilon=0.3)).fit(
        df
    )
    # the lattice's alpha is epsilon rounded down to 20 bits: a scale at most 2^-19 larger
    assert 1.0 / 0.3 <= sec.noise_scale_["histogram"] <= (1.0 / 0.3) * (1 + 2.0**-19)
    geo3 = DPHistogramSynthesizer(**_params(epsilon=0.3)).fit(df)
    assert geo3.noise_scale_["histogram"] == sec.noise_scale_["histogram"]
    free = DPHistogramSynthesizer(**_params(epsilon=math.inf)).fit(df)
    assert free.noise_scale_ == {"histogram": 0.0}


def test_noise_scale_matches_the_released_noise():
    """The released counts of empty cells of a large grid are noise only: their law is the
    discrete Laplace of scale noise_scale_ (P(Z >= m) = r^m / (1 + r), r = exp(-1/b))."""
    df = pd.DataFrame({"x": np.zeros(50)})
    est = DPHistogramSynthesizer(
        epsilon=0.8, bounds=(0.0, 1.0), n_bins=20000, threshold=0.0, random_state=3
    ).fit(df)
    b = est.noise_scale_["histogram"]
    h = est.histograms_[0]
    empty = h["counts"][h["cells"] != 0]  # survivors: noise >= 1 (threshold 0)
    r = math.exp(-1.0 / b)
    assert len(empty) / 19999 == pytest.approx(r / (1 + r), rel=0.05)
    assert np.mean(empty - 1) == pytest.approx(r / (1 - r), rel=0.08)


def test_noise_is_the_deprecated_name_of_mechanism():
    df = _frame(400)
    new = DPHistogramSynthesizer(**_params(mechanism="laplace")).fit(df)
    with pytest.warns(FutureWarning, match=r"noise=\.\.\.\) is deprecated.*mechanism="):
        old = DPHistogramSynthesizer(**_params(noise="laplace")).fit(df)
    # the same release: the seed material holds the old name with the value in effect
    for a, b in zip(old.histograms_, new.histograms_, strict=True):
        np.testing.assert_array_equal(a["cells"], b["cells"])
        np.testing.assert_array_equal(a["counts"], b["counts"])
    pd.testing.assert_frame_equal(old.sample(30, random_state=1), new.sample(30, random_state=1))
    assert old.noise_scale_ == new.noise_scale_
    with pytest.raises(ValueError, match="set mechanism= only"):
        DPHistogramSynthesizer(**_params(noise="laplace", mechanism="laplace")).fit(df)
    est = DPHistogramSynthesizer(noise="geometric")
    assert est.get_params()["noise"] == "geometric"
    assert est.get_params()["mechanism"] == "geometric"
    assert clone(est).noise == "geometric"
    assert DPHistogramSynthesizer().noise == "deprecated"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning without the old name
        DPHistogramSynthesizer(**_params(mechanism="geometric")).fit(df)
    with pytest.raises(ValueError, match="noise"):
        DPHistogramSynthesizer(**_params(noise="gaussian")).fit(df)

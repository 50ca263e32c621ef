"""Collapse check: every table synthesizer's default fit keeps every level and varies.

Run over every discovered estimator with ``sample`` that takes a table (a ``categories``
parameter: the tabular front end), so a new synthesizer is checked without editing this
file. A fit *collapses* when a categorical or binary level that holds at least 5 % of the
real rows never appears in 2,000 synthetic rows, or a column that varies in the real
data comes out constant (issue 18: a GAN whose outcome came out 100 % one class and
whose binary columns came out constant, even at ``epsilon=inf``).

The fast test runs each estimator at its defaults except where the default fit is too
slow for the default test profile: ``DPGANSynthesizer`` then runs 100 critic steps and
``DPFlowDensity`` 50 steps instead of their default schedules (about 470 and 280 at this
size). ``test_no_collapse_at_defaults``
(slow) runs every synthesizer at its real defaults, private and non-private, on a
larger table.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.discovery import all_estimators

TABLE_SYNTHESIZERS = {
    name: cls
    for name, cls in all_estimators()
    if hasattr(cls, "sample") and "categories" in cls().get_params()
}
#: Fewer steps in the fast profile only (the default schedule is checked in the slow test).
FAST_OVERRIDES = {"DPGANSynthesizer": {"n_iter": 100}, "DPFlowDensity": {"n_iter": 50}}
REGIONS = list("NSEWC")


def clinical_table(n, seed=0):
    """The 10-column mixed table of the report (as ``benchmarks/marginal.py``'s
    ``clinical``): integer age, sex, BMI, smoker, blood pressure, a rare binary (diabetes,
    ~8 %), cholesterol, a 5-level region (one level ~10 %), a visit count and a rare
    outcome (~5 %). At n = 3,000 and seed 0 the GAN's old defaults returned an outcome
    that was 100 % one class and a constant diabetes column, even at ``epsilon=inf``."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 91, n)
    bmi = np.clip(rng.normal(24 + 0.05 * (age - 50), 4, n), 15, 50)
    smoker = rng.random(n) < 0.25
    sbp = np.clip(100 + 0.5 * age + 0.8 * (bmi - 25) + 5 * smoker + rng.normal(0, 10, n), 80, 220)
    diab = rng.random(n) < 1 / (1 + np.exp(-(bmi - 32) / 2))
    logit = -4 + 0.04 * (age - 50) + 0.03 * (sbp - 130) + 1.0 * smoker + 1.2 * diab
    outcome = rng.random(n) < 1 / (1 + np.exp(-logit))
    df = pd.DataFrame(
        {
            "age": age,
            "sex": rng.choice(["F", "M"], n),
            "bmi": bmi,
            "smoker": smoker,
            "sbp": sbp,
            "diabetes": diab,
            "chol": np.clip(rng.normal(5 + 0.02 * (age - 50) + 0.3 * diab, 1.0), 2, 10),
            "region": rng.choice(REGIONS, n, p=[0.3, 0.2, 0.2, 0.2, 0.1]),
            "visits": np.clip(rng.poisson(2 + 5 * outcome), 0, 9),
            "outcome": outcome,
        }
    )
    bounds = {
        "age": (18, 90),
        "bmi": (15.0, 50.0),
        "sbp": (80.0, 220.0),
        "chol": (2.0, 10.0),
        "visits": (0, 9),
    }
    return df, bounds, {"sex": ["F", "M"], "region": REGIONS}


def collapse_problems(real, syn, *, min_share=0.05):
    """Human-readable collapse findings (empty when there is none)."""
    problems = []
    for c in real.columns:
        r, s = real[c], syn[c]
        if r.nunique() > 1 and s.nunique() <= 1:
            problems.append(f"column {c!r} is constant")
        if r.dtype == bool or not pd.api.types.is_numeric_dtype(r):
            shares = r.value_counts(normalize=True)
            missing = [v for v, p in shares.items() if p >= min_share and not (s == v).any()]
            if missing:
                problems.append(f"column {c!r} lacks levels {missing}")
    return problems


def _fit_sample(cls, df, bounds, cats, epsilon, overrides, n_samples=2000):
    est = cls(epsilon=epsilon, bounds=bounds, categories=cats, random_state=0, **overrides)
    if "device" in est.get_params():
        est.set_params(device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(df)
    return est.sample(n_samples, random_state=1)


def test_the_check_finds_the_reported_collapse():
    df, _, _ = clinical_table(600)
    syn = df.copy()
    syn["outcome"] = False  # 100 % one class
    syn["region"] = syn["region"].replace("C", "N")  # a rare level gone
    found = collapse_problems(df, syn)
    assert any("'outcome' is constant" in p for p in found)
    assert any("'region' lacks levels ['C']" in p for p in found)
    assert collapse_problems(df, df) == []


def test_every_table_synthesizer_is_checked():
    assert {
        "DPHistogramSynthesizer",
        "DPMarginalSynthesizer",
        "DPGANSynthesizer",
        "DPFlowDensity",
    } <= set(TABLE_SYNTHESIZERS)


@pytest.mark.parametrize("name", sorted(TABLE_SYNTHESIZERS))
def test_no_collapse_nonprivate_small(name):
    df, bounds, cats = clinical_table(600)
    syn = _fit_sample(
        TABLE_SYNTHESIZERS[name], df, bounds, cats, math.inf, FAST_OVERRIDES.get(name, {})
    )
    assert list(syn.columns) == list(df.columns)
    assert collapse_problems(df, syn) == []


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [3.0, math.inf])
@pytest.mark.parametrize("name", sorted(TABLE_SYNTHESIZERS))
def test_no_collapse_at_defaults(name, epsilon):
    df, bounds, cats = clinical_table(3000, seed=0)
    syn = _fit_sample(TABLE_SYNTHESIZERS[name], df, bounds, cats, epsilon, {})
    assert collapse_problems(df, syn) == []


def test_gan_draws_rare_levels_from_its_probabilities():
    """The reported collapse: a generator that learned a 10 % outcome and a 5 % region
    emitted them as probabilities, and thresholding at 1/2 (argmax) never produced them;
    ``sample`` now draws the level from the generator's output."""
    import torch

    from skdp.synthesis import DPGANSynthesizer

    df, bounds, cats = clinical_table(300)
    gan = DPGANSynthesizer(
        epsilon=math.inf, bounds=bounds, categories=cats, n_iter=2, device="cpu", random_state=0
    ).fit(df)
    enc = gan._encoder
    row = torch.full((enc.n_encoded_features_,), 0.5)
    row[enc.slices_["outcome"]] = 0.1
    row[enc.slices_["smoker"]] = 0.0
    row[enc.slices_["region"]] = torch.tensor([0.8, 0.05, 0.05, 0.05, 0.05])

    class Fixed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.unused = torch.nn.Parameter(torch.zeros(1))  # device and dtype

        def forward(self, z, c=None):
            return row.expand(z.shape[0], -1).to(z.dtype)

    gan.generators_ = [Fixed()]
    syn = gan.sample(20_000, random_state=0)
    assert abs(syn["outcome"].mean() - 0.1) < 0.01  # Bernoulli(0.1): sd 0.002
    shares = syn["region"].value_counts(normalize=True)
    assert abs(shares["N"] - 0.8) < 0.015 and all(abs(shares[v] - 0.05) < 0.01 for v in "SEWC")
    assert not syn["smoker"].any()  # probability 0 stays 0

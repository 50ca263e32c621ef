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

import pytest

from skdp.discovery import all_estimators
from tests._fixtures import clinical_table, collapse_problems

TABLE_SYNTHESIZERS = {
    name: cls
    for name, cls in all_estimators()
    if hasattr(cls, "sample") and "categories" in cls().get_params()
}
#: Fewer steps in the fast profile only (the default schedule is checked in the slow test).
FAST_OVERRIDES = {"DPGANSynthesizer": {"n_iter": 100}, "DPFlowDensity": {"n_iter": 50}}


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

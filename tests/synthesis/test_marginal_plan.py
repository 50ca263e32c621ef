"""DPMarginalSynthesizer's release plan: the privacy facts come from MarginalPlan alone.

The plan is built from public inputs only (the column count, the public ``n``, the
budget, the bounds' public share, the budget fractions and ``selection``); a plan built
without the rows gives the fitted ``privacy_breakdown_``, ``rho_breakdown_``,
``epsilon_spent_`` and ``delta_spent_`` (and the noise of the first measurements), on
two different tables, and its breakdown sums to ``epsilon``.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.synthesis import DPMarginalSynthesizer, marginal_n_bins
from skdp.synthesis._marginal_plan import BUDGET_FRACTIONS, MarginalPlan, budget_shares
from tests._fixtures import CLINICAL_BOUNDS as BOUNDS
from tests._fixtures import CLINICAL_CATS as CATS
from tests._fixtures import clinical_frame

INTEGERS = {"age": "integer", "visits": "integer"}
META = {"bounds": BOUNDS, "categories": CATS, "column_types": INTEGERS}
N = 1200


def _frame(seed, missing=False):
    df = clinical_frame(N, seed=seed)
    if missing:  # a declared missing level per column; some cells of each kind missing
        rng = np.random.default_rng(seed + 100)
        df = df.astype({"age": float, "visits": float})
        for c in ("age", "bmi", "visits", "sex", "blood"):
            df.loc[rng.random(N) < 0.05, c] = None if df[c].dtype == object else np.nan
    return df


def _wide(seed):
    """Three columns of 150 levels: no pair of them fits AIM's 10,000-cell cap, so no
    round runs; the plan still gives the rounds their share."""
    rng = np.random.default_rng(seed)
    levels = [f"l{i}" for i in range(150)]
    return pd.DataFrame({c: rng.choice(levels, N) for c in "abc"})


CASES = {
    "aim-zcdp": (_frame, {**META}),
    "aim-pure": (
        _frame,
        {**META, "delta": 0.0, **dict(zip(BUDGET_FRACTIONS, (1 / 6, 1 / 3, 1 / 2), strict=True))},
    ),
    "mst-zcdp": (_frame, {**META, "selection": "mst"}),
    "mst-pure": (_frame, {**META, "selection": "mst", "delta": 0.0}),
    "aim-private-bounds": (_frame, {**META, "epsilon": 4.0, "bounds": "private"}),
    "mst-private-bounds": (
        _frame,
        {**META, "epsilon": 4.0, "bounds": "private", "selection": "mst", "delta": 0.0},
    ),
    "missing-category": (lambda s: _frame(s, missing=True), {**META, "missing": "category"}),
    "two-columns": (
        lambda s: _frame(s)[["age", "sex"]],
        {"bounds": {"age": BOUNDS["age"]}, "categories": {"sex": CATS["sex"]}},
    ),
    "one-column": (lambda s: _frame(s)[["bmi"]], {"bounds": {"bmi": BOUNDS["bmi"]}}),
    "aim-no-candidate": (
        _wide,
        {"categories": {c: [f"l{i}" for i in range(150)] for c in "abc"}, "compress": False},
    ),
    "inf": (
        lambda s: _frame(s)[["age", "sex", "bmi"]],
        {
            "bounds": {c: BOUNDS[c] for c in ("age", "bmi")},
            "categories": {"sex": CATS["sex"]},
            "column_types": {"age": "integer"},
            "epsilon": math.inf,
        },
    ),
}


def _fit(make, seed, params, dask_partitions=None):
    X = make(seed)
    if dask_partitions:
        dd = pytest.importorskip("dask.dataframe")
        X = dd.from_pandas(X, npartitions=dask_partitions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the "private" opt-in's BoundsEstimateWarning
        return DPMarginalSynthesizer(random_state=seed, **params).fit(X), X.shape[1]


def _plan(est, d, eps_bounds):
    """The plan from the estimator's parameters and public facts alone (no rows)."""
    return MarginalPlan.build(
        epsilon=est.epsilon,
        delta=est.delta,
        eps_bounds=eps_bounds,
        n_columns=d,
        share=budget_shares(est),
        selection=est.selection,
        n_public=N,
    )


def _check(est, plan):
    assert plan.breakdown() == est.privacy_breakdown_
    assert plan.rho_breakdown() == est.rho_breakdown_
    assert plan.rho == est.rho_
    assert (plan.epsilon_spent, plan.delta_spent) == (est.epsilon_spent_, est.delta_spent_)
    assert plan.selection == est.selection_
    assert plan.mechanism == est.mechanism_
    assert plan.one_way_scale == est.noise_scale_["one_way"]
    if est.noise_scale_["two_way"] > 0:  # a 2-way marginal (AIM: a round) was measured
        assert plan.two_way_scale == est.noise_scale_["two_way"]
        assert plan.select_epsilon == est._select_epsilon
    if math.isfinite(plan.epsilon):
        assert math.fsum(plan.breakdown().values()) == pytest.approx(plan.epsilon, rel=1e-12)
        if plan.rho is not None:
            rhos = plan.rho_breakdown().values()
            assert math.fsum(rhos) == pytest.approx(plan.rho, rel=1e-12)


@pytest.mark.parametrize("case", list(CASES))
def test_privacy_facts_come_from_the_plan_alone(case):
    make, params = CASES[case]
    est, d = _fit(make, 0, params)
    eps_bounds = est.privacy_breakdown_["bounds"]  # a public fraction of epsilon
    assert eps_bounds == (0.1 * est.epsilon if params.get("bounds") == "private" else 0.0)
    plan = _plan(est, d, eps_bounds)
    _check(est, plan)
    # another table of the same public size: the same facts
    other, _ = _fit(make, 1, params)
    _check(other, plan)
    if case == "aim-no-candidate":
        assert est.rounds_ == [] and est.privacy_breakdown_["two_way"] > 0
    if "bmi" in est.n_bins_:  # n_bins="auto" reads the plan's public noise and n
        missing_level = params.get("missing") == "category"
        assert est.n_bins_["bmi"] == marginal_n_bins(N, plan.bins_sd) + missing_level


@pytest.mark.parametrize("selection", ["aim", "mst"])
def test_dask_privacy_facts_come_from_the_plan_alone(selection, sync_scheduler_or_skip):
    params = {**META, "selection": selection}
    est, d = _fit(_frame, 0, params, dask_partitions=3)
    _check(est, _plan(est, d, 0.0))


@pytest.fixture
def sync_scheduler_or_skip():
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="synchronous"):
        yield


def test_plan_is_frozen_and_refuses_what_fit_refuses():
    plan = MarginalPlan.build(
        epsilon=1.0,
        delta=1e-5,
        eps_bounds=0.0,
        n_columns=4,
        share=np.full(3, 1 / 3),
        selection="auto",
        n_public=100,
    )
    assert plan.selection == "aim" and plan.phases == ("one_way", "rounds")
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.epsilon = 2.0
    for selection in ("aim", "mst"):
        with pytest.raises(ValueError, match="no usable zCDP budget"):
            MarginalPlan.build(
                epsilon=1e-200,
                delta=1e-5,
                eps_bounds=0.0,
                n_columns=4,
                share=np.full(3, 1 / 3),
                selection=selection,
                n_public=100,
            )

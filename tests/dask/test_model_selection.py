"""DP scorers on Dask input, and model selection under joblib's Dask backend: the
privacy spend is computed and charged once in the calling process."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
joblib = pytest.importorskip("joblib")
distributed = pytest.importorskip("distributed")

from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, cross_validate  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from skdp.accounting import PrivacyLedger  # noqa: E402
from skdp.exceptions import PrivacySpendAborted  # noqa: E402
from skdp.ilp import DPILPClassifier  # noqa: E402
from skdp.metrics import cv_privacy_spend, make_dp_scorer  # noqa: E402
from skdp.model_selection import DPGridSearchCV, dp_cross_validate  # noqa: E402

from ._guard import no_full_compute  # noqa: E402


def _data(n=2000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("metric", ["roc_auc", "average_precision", "accuracy"])
def test_scorer_on_dask_input(sync_scheduler, metric):
    """The response is computed per partition; a model whose predictions do not depend
    on how the rows are blocked (a tree) gives the same seeded release as in memory."""
    X, y = _data()
    cols = list("abcd")
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(
        pd.DataFrame(X, columns=cols), y
    )
    scorer = make_dp_scorer(metric, epsilon=1.0, delta=1e-6, random_state=5)
    ref = scorer(model, pd.DataFrame(X, columns=cols), y)
    frame = dd.from_pandas(pd.DataFrame(X, columns=cols), npartitions=3)
    labels = dd.from_pandas(pd.Series(y, name="y"), npartitions=3)
    with no_full_compute(max_rows=4):
        assert scorer(model, frame, labels) == ref
    array_model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    with no_full_compute(max_rows=4):
        got = scorer(array_model, da.from_array(X, chunks=(300, 2)), da.from_array(y, chunks=300))
    assert got == scorer(array_model, X, y)


def test_scorer_exact_value_blas_model(sync_scheduler):
    """A linear model's scores computed per block may differ from one in-memory call in
    the last bits (BLAS blocking), which changes a seeded digest but not the metric."""
    X, y = _data()
    model = LogisticRegression().fit(X, y)
    scorer = make_dp_scorer("roc_auc", epsilon=np.inf)
    got = scorer(model, da.from_array(X, chunks=(300, 4)), da.from_array(y, chunks=300))
    assert got == pytest.approx(scorer(model, X, y), abs=1e-12)


CV = KFold(3, shuffle=True, random_state=0)


@pytest.mark.slow  # about 6 s: the workers import scikit-learn first
def test_sklearn_search_under_dask_backend(dask_client):
    """GridSearchCV / cross_validate with a seeded, ledger-free DP scorer on the
    cluster: the same scores as in-process; the total is computed from candidates x
    folds in the calling process and charged once."""
    X, y = _data(n=600)
    grid = {"C": [0.1, 1.0]}
    scorer = make_dp_scorer("roc_auc", epsilon=0.5, delta=1e-6, random_state=2)
    ref = GridSearchCV(LogisticRegression(), grid, cv=CV, scoring=scorer).fit(X, y)
    ledger = PrivacyLedger(epsilon_budget=10.0, delta_budget=1e-3)
    ledger.spend(*scorer.privacy_spend(n_splits=3, n_candidates=2), label="grid")
    with joblib.parallel_backend("dask"):
        got = GridSearchCV(LogisticRegression(), grid, cv=CV, scoring=scorer, n_jobs=2).fit(X, y)
        cv = cross_validate(LogisticRegression(), X, y, cv=CV, scoring=scorer, n_jobs=2)
    np.testing.assert_array_equal(
        got.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"]
    )
    ref_cv = cross_validate(LogisticRegression(), X, y, cv=CV, scoring=scorer)
    np.testing.assert_array_equal(cv["test_score"], ref_cv["test_score"])
    assert len(ledger) == 1
    assert (ledger.epsilon_spent, ledger.delta_spent) == cv_privacy_spend(
        epsilon=0.5, delta=1e-6, n_splits=3, n_candidates=2
    )


@pytest.mark.slow  # about 6 s alone (workers import scikit-learn); loky: tests/metrics
def test_ledger_copy_on_a_worker_aborts(dask_client):
    """A scorer holding a ledger, shipped to a Dask worker, holds a copy there: the copy
    refuses to spend and the search stops (nothing is counted in a worker and lost)."""
    X, y = _data(n=300)
    ledger = PrivacyLedger(epsilon_budget=100.0)
    scorer = make_dp_scorer("accuracy", epsilon=0.5, ledger=ledger, random_state=0)
    with joblib.parallel_backend("dask"), pytest.raises(PrivacySpendAborted) as err:
        GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=CV, scoring=scorer, n_jobs=2).fit(
            X, y
        )
    assert type(err.value.error).__name__ == "LedgerCopyError"
    assert len(ledger) == 0 and ledger.epsilon_spent == 0.0


def test_skdp_search_under_dask_backend(dask_client):
    """DPGridSearchCV and dp_cross_validate under the Dask backend (n_jobs=2: the tasks
    run on the workers): one ledger entry each, charged in the client, equal to
    cv_privacy_spend of candidates x folds; the same scores and selection."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(1500, 4))
    y = X[:, 0] & X[:, 1]
    scorer = make_dp_scorer("accuracy", epsilon=0.5, random_state=0)
    est = DPILPClassifier(max_clause_length=2, random_state=0)
    grid = {"epsilon": [0.5, 1.0]}

    def run(n_jobs=None):
        ledger = PrivacyLedger(epsilon_budget=50.0)
        search = DPGridSearchCV(
            est, grid, scoring=scorer, cv=3, ledger=ledger, random_state=0, n_jobs=n_jobs
        ).fit(X, y)
        res = dp_cross_validate(
            est, X, y, scoring=scorer, cv=3, ledger=ledger, random_state=0, n_jobs=n_jobs
        )
        return ledger, search, res

    ref_ledger, ref_search, ref_res = run()
    with joblib.parallel_backend("dask"), distributed.get_task_stream(dask_client) as tasks:
        ledger, search, res = run(n_jobs=2)
    # the candidate x fold fits ran on the workers (6 for the search, 3 for the folds)
    assert len(tasks.data) >= 9
    assert len(ledger) == 2
    eps_search = cv_privacy_spend(epsilon=0.5, n_splits=3, n_candidates=2, fit_epsilon=[0.5, 1.0])[
        0
    ]
    eps_cv = cv_privacy_spend(epsilon=0.5, n_splits=3, fit_epsilon=1.0, refit=False)[0]
    assert search.epsilon_spent_ == pytest.approx(eps_search)
    assert ledger.epsilon_spent == pytest.approx(eps_search + eps_cv)
    assert ledger.epsilon_spent == ref_ledger.epsilon_spent
    assert search.best_params_ == ref_search.best_params_
    np.testing.assert_array_equal(res["test_score"], ref_res["test_score"])

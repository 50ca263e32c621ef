"""DPILPClassifier with groups= (the patient as the privacy unit) and secure_mode."""

from __future__ import annotations

import numpy as np
import pytest

import skdp.ilp._search as search_module
from skdp.ilp import DPILPClassifier


def _data(n_patients=300, rows=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n_patients * rows, 4))
    y = X[:, 0] & X[:, 1]
    return X, y, np.repeat(np.arange(n_patients), rows)


def test_patient_level_fit_divides_every_alpha_by_k():
    X, y, g = _data()
    kw = dict(epsilon=1.0, max_clause_length=2, random_state=0)
    row = DPILPClassifier(**kw).fit(X, y)
    group = DPILPClassifier(max_rows_per_group=3, **kw).fit(X, y, groups=g)
    assert group.privacy_unit_ == "group" and group.max_rows_per_group_ == 3
    assert row.privacy_unit_ == "row" and row.max_rows_per_group_ is None
    assert group.epsilon_spent_ == row.epsilon_spent_ == 1.0
    assert group.privacy_breakdown_ == row.privacy_breakdown_
    for entry in group.search_levels_:
        if entry["alpha"] is not None:
            beta = entry["n_clauses"]
            assert entry["alpha"] == pytest.approx(entry["epsilon"] / (3 * beta))
    assert "privacy_unit_" not in vars(row)


def test_naive_search_alpha_per_patient():
    X, y, g = _data()
    est = DPILPClassifier(search="naive", max_clause_length=1, max_rows_per_group=2)
    est.set_params(random_state=0).fit(X, y, groups=g)
    (entry,) = est.search_levels_
    assert entry["alpha"] == pytest.approx(1.0 / (2 * entry["n_clauses"]))


def test_groups_refusals_name_the_parameter():
    X, y, g = _data()
    with pytest.raises(ValueError, match="max_rows_per_group"):
        DPILPClassifier().fit(X, y, groups=g)
    with pytest.raises(ValueError, match="groups"):
        DPILPClassifier(max_rows_per_group=2).fit(X, y, groups=g[:-1])
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="Dask"):
        DPILPClassifier(max_rows_per_group=2).fit(da.from_array(X, chunks=100), y, groups=g)


def test_secure_mode_draws_the_noise_from_the_os(monkeypatch):
    seen = []
    real = search_module.two_sided_geometric

    def spy(size, *, alpha, rng, secure_mode=False):
        seen.append(secure_mode)
        return real(size, alpha=alpha, rng=rng, secure_mode=secure_mode)

    monkeypatch.setattr(search_module, "two_sided_geometric", spy)
    X, y, _ = _data(n_patients=100)
    DPILPClassifier(max_clause_length=1, random_state=0).fit(X, y)
    assert seen and not any(seen)
    seen.clear()
    DPILPClassifier(max_clause_length=1, secure_mode=True, random_state=0).fit(X, y)
    assert seen and all(seen)


def test_secure_mode_default_leaves_the_seeded_release_unchanged():
    X, y, _ = _data(n_patients=100)
    a = DPILPClassifier(epsilon=0.5, max_clause_length=2, random_state=4).fit(X, y)
    b = DPILPClassifier(epsilon=0.5, max_clause_length=2, secure_mode=False, random_state=4)
    b.fit(X, y)
    np.testing.assert_array_equal(a.clause_noisy_coverage_, b.clause_noisy_coverage_)
    assert a.clauses_ == b.clauses_

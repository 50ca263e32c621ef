"""A part of ``privacy_breakdown_`` that a fit may repeat is numbered from 1 when it
is repeated and bare when it occurs once (``doc/glossary.rst``): the histogram's
``"histogram"``, the ILP's and the k-median's ``"round"``. The single round's key of
before 0.2, ``"round_1"``, still reads for one release, with a ``FutureWarning``."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

from skdp.cluster import SubsampledExpMedian
from skdp.ilp import DPILPClassifier
from skdp.synthesis import DPHistogramSynthesizer
from skdp.utils._parts import part_keys


def _binary(n=120):
    X = np.random.default_rng(0).integers(0, 2, size=(n, 4))
    return X, X[:, 0] & X[:, 1]


def _ilp(**kw):
    return DPILPClassifier(epsilon=1.0, max_clause_length=2, random_state=0, **kw)


def _kmedian_candidates():
    X = np.random.default_rng(1).uniform(0.0, 1.0, size=(100, 2))
    grid = np.array([[a, b] for a in (0, 0.5, 1) for b in (0, 1)])
    return SubsampledExpMedian(n_clusters=2, epsilon=1.0, candidates=grid, random_state=0), X


def _single_round_fits():
    X, y = _binary()
    est, Xk = _kmedian_candidates()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # the fits themselves do not warn
        return {"DPILPClassifier": _ilp().fit(X, y), "SubsampledExpMedian": est.fit(Xk)}


def test_part_keys():
    assert part_keys("round", 1) == ["round"]
    assert part_keys("histogram", 2) == ["histogram_1", "histogram_2"]


@pytest.mark.parametrize("name", ["DPILPClassifier", "SubsampledExpMedian"])
def test_a_single_round_is_bare_and_its_old_key_reads_with_a_warning(name):
    est = _single_round_fits()[name]
    for bd in (est.privacy_breakdown_, pickle.loads(pickle.dumps(est)).privacy_breakdown_):
        assert list(bd) == ["round"] and bd["round"] == est.epsilon_spent_
        assert "round_1" not in bd
        with pytest.warns(FutureWarning, match=rf"{name}\.privacy_breakdown_.*'round'"):
            assert bd["round_1"] == bd["round"]
        with pytest.warns(FutureWarning):
            assert bd.get("round_1") == bd["round"]


def test_several_rounds_are_numbered_and_have_no_bare_key():
    X, y = _binary()
    clf = _ilp(n_clauses=2).fit(X, y)
    assert list(clf.privacy_breakdown_) == ["round_1", "round_2"]
    with pytest.raises(KeyError):
        clf.privacy_breakdown_["round"]


def test_histogram_single_and_several_parts():
    X = np.random.default_rng(2).uniform(0.0, 1.0, size=(80, 2))
    one = DPHistogramSynthesizer(epsilon=1.0, bounds=(0, 1), random_state=0).fit(X)
    two = DPHistogramSynthesizer(
        epsilon=1.0, bounds=(0, 1), projections=[(0,), (1,)], random_state=0
    ).fit(X)
    assert [k for k in one.privacy_breakdown_ if k.startswith("histogram")] == ["histogram"]
    assert [k for k in two.privacy_breakdown_ if k.startswith("histogram")] == [
        "histogram_1",
        "histogram_2",
    ]

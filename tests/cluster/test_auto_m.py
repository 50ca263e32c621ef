"""The ``"auto"`` number of candidate subsets of SubsampledExpMedian (Lantz 2016, §8.3)."""

from __future__ import annotations

import numpy as np
import pytest

from skdp.cluster import SubsampledExpMedian


@pytest.mark.parametrize(
    ("n", "expected"), [(100, [56, 111, 222, 443]), (1000, [83, 166, 332, 664])]
)
def test_auto_m_matches_the_spec_table(n, expected):
    V = np.random.default_rng(0).uniform(-1, 1, size=(n, 2))
    X = V[:5]
    got = [
        SubsampledExpMedian(n_clusters=k, candidates=V, random_state=0).fit(X).n_candidates_
        for k in (2, 4, 8, 16)
    ]
    assert got == expected

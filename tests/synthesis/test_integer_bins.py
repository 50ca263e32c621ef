"""Integer columns near the int64 limits (issue 30): binned exactly, or refused naming the
column, in both binned synthesizers."""

import numpy as np
import pandas as pd
import pytest

from skdp.synthesis import DPHistogramSynthesizer, DPMarginalSynthesizer
from skdp.utils._tabular.binning import MAX_INTEGER_BOUND, integer_group_starts


@pytest.mark.parametrize(
    "lo, hi, k",
    [(0, 9, 4), (-3, 3, 100), (-(10**18), 10**18, 32), (-(2**62) + 1, 2**62 - 1, 2**20)],
)
def test_integer_group_starts_are_exact_contiguous_groups(lo, hi, k):
    s = integer_group_starts("a", lo, hi, k)
    m = hi - lo + 1
    assert s.dtype == np.int64 and s.size == min(k, m) + 1
    assert int(s[0]) == lo and int(s[-1]) == hi + 1  # covers every integer once
    sizes = np.diff(s)
    assert sizes.min() >= 1 and sizes.max() - sizes.min() <= 1  # near-equal, no wrap
    # equal to the exact Python-integer formula
    kk = s.size - 1
    for i in (0, 1, kk // 2, kk):
        assert int(s[i]) == lo + (i * m) // kk


@pytest.mark.parametrize("bound", [2.0**62, 1e18 * 5, 1e150])
def test_integer_bounds_beyond_int64_are_refused_naming_the_column(bound):
    assert bound >= MAX_INTEGER_BOUND
    with pytest.raises(ValueError, match="integer column 'age'.*2\\*\\*62"):
        integer_group_starts("age", -bound, bound, 8)


@pytest.mark.parametrize("cls", [DPHistogramSynthesizer, DPMarginalSynthesizer])
def test_synthesizers_on_integer_columns_near_the_limits(cls):
    X = pd.DataFrame({"a": np.arange(60) % 7 - 3, "b": np.linspace(0, 1, 60)})
    kw = dict(epsilon=1.0, column_types={"a": "integer"}, random_state=0)
    lo, hi = -1e18, 1e18  # OverflowError or groups of negative size before
    s = cls(bounds={"a": (lo, hi), "b": (0.0, 1.0)}, **kw).fit(X).sample(200, random_state=0)
    a = s["a"].to_numpy(dtype=float)
    assert a.min() >= lo and a.max() <= hi and np.all(a == np.round(a))
    with pytest.raises(ValueError, match="integer column 'a'"):
        cls(bounds={"a": (-1e150, 1e150), "b": (0.0, 1.0)}, **kw).fit(X)

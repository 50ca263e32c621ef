"""Issue 15 item 6: the histogram's sparse sampler must not decide from private counts.

The refusal used to compare ``(n_cells - n_occupied) * p_survive`` with
``max_survivors`` and printed that number: whether ``fit`` raised, and its message,
revealed the number of occupied cells (a private count). Two data sets of the same
(public) size that differ only in how many cells they occupy must get the same
decision and the same message.
"""

import pandas as pd
import pytest

from skdp.synthesis import DPHistogramSynthesizer

LEVELS = [f"l{i}" for i in range(10)]


def _data(n_occupied):
    # 20 rows either way (n is public); they occupy 1 or n_occupied distinct cells
    rows = [(LEVELS[i % n_occupied], LEVELS[(i // 10) % 10]) for i in range(20)]
    if n_occupied == 1:
        rows = [(LEVELS[0], LEVELS[0])] * 20
    return pd.DataFrame(rows, columns=["a", "b"])


def _fit(df, max_survivors):
    # 100 cells, sparse path; p = r^2 / (1 + r) with r = e^-1 (tau = 0.5 log 20, m = 2):
    # noise alone lifts about 9.9 cells over the threshold -- a public number
    return DPHistogramSynthesizer(
        epsilon=1.0,
        categories={"a": LEVELS, "b": LEVELS},
        n_public=20,
        max_cells=10,
        max_survivors=max_survivors,
        random_state=0,
    ).fit(df)


def test_refusal_does_not_depend_on_the_number_of_occupied_cells():
    few, many = _data(1), _data(10)
    assert few.value_counts().size == 1 and many.value_counts().size == 20
    messages = []
    for df in (few, many):
        # before: 99 * 0.099 = 9.8 > 9 refused, 80 * 0.099 = 7.9 < 9 did not
        with pytest.raises(ValueError, match="cells") as err:
            _fit(df, max_survivors=9)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert "100 cells" in messages[0]
    for df in (few, many):  # and above the public expectation both run
        assert _fit(df, max_survivors=10).histograms_[0]["sparse"]

"""A DP scorer whose ledger keeps its books in another privacy unit stops the run (a
PrivacySpendAborted, which scikit-learn's error_score cannot turn into a NaN score)."""

import numpy as np
import pytest

from skdp.accounting import PrivacyLedger
from skdp.exceptions import PrivacySpendAborted, PrivacyUnitError
from skdp.metrics import dp_accuracy_score, make_dp_scorer


def test_unit_mismatch_in_a_scorer_aborts_instead_of_scoring_nan():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    ledger = PrivacyLedger(10.0, unit="group")
    with pytest.raises(PrivacyUnitError, match="per patient"):
        dp_accuracy_score(y, y, epsilon=0.5, ledger=ledger, random_state=0)
    assert len(ledger) == 0

    class _Fixed:
        def predict(self, X):
            return X[:, 0].astype(int)

    scorer = make_dp_scorer("accuracy", epsilon=0.5, ledger=ledger, random_state=0)
    with pytest.raises(PrivacySpendAborted, match="refused a spend"):
        scorer(_Fixed(), y[:, None].astype(float), y)
    assert len(ledger) == 0

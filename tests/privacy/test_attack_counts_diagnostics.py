"""Attacks on decisions and diagnostics that depend on private data (items 6 and 7).

* A misconfigured ``pos_label`` raised only when both classes were present, so whether a
  scorer call raised told ``y`` with a positive row from its neighbour without one.
* ``ExpMFlow*.flow_diagnostics_`` was always stored and pickled: its ``log_z_estimate``
  separates D from D plus one row by ~5 nats with a seed spread of 0.002; the collapse
  warning printed data-dependent ESS values; ``verbose`` printed the private loss
  without saying so.
"""

from __future__ import annotations

import math
import pickle
import re
import warnings

import numpy as np
import pytest

from skdp.exceptions import ApproximateGuaranteeWarning
from skdp.linear_model import ExpMFlowClassifier
from skdp.metrics import dp_average_precision_score, dp_roc_auc_score


def _outcome(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except ValueError as exc:
        return type(exc)
    return "ok"


@pytest.mark.parametrize("metric", [dp_roc_auc_score, dp_average_precision_score])
@pytest.mark.parametrize("pos_label", [5, 2.0])
def test_pos_label_check_does_not_depend_on_which_classes_occur(metric, pos_label):
    s = np.linspace(0.0, 1.0, 8)
    with_positive = np.array([0, 0, 0, 0, 0, 0, 0, 1])
    without = np.zeros(8, dtype=int)  # its neighbour under replace-one
    a = _outcome(metric, with_positive, s, epsilon=1.0, pos_label=pos_label)
    b = _outcome(metric, without, s, epsilon=1.0, pos_label=pos_label)
    assert a == b


def test_pos_label_of_the_wrong_type_raises_on_public_facts():
    s = np.linspace(0.0, 1.0, 4)
    for y in ([0, 0, 1, 1], [0, 0, 0, 0]):
        with pytest.raises(ValueError, match="pos_label"):
            dp_roc_auc_score(y, s, epsilon=1.0, pos_label="yes")


_FAST = {
    "n_iter": 20,
    "n_layers": 1,
    "batch_size": 16,
    "n_diagnostic_samples": 64,
    "dtype": "float64",
    "device": "cpu",
}


def _binary(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def test_expm_flow_pickle_holds_no_diagnostics_by_default():
    X, y = _binary()
    X1, y1 = np.vstack([X, [[3.0, -3.0]]]), np.append(y, 0)
    for data in ((X, y), (X1, y1)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf = ExpMFlowClassifier(classes=[0, 1], epsilon=1.0, random_state=None, **_FAST)
            clf.fit(*data)
        restored = pickle.loads(pickle.dumps(clf))
        assert restored.flow_diagnostics_ is None
        assert b"log_z_estimate" not in pickle.dumps(clf)
        assert not hasattr(restored, "flow_")
        assert clf.privacy_guarantee_ == "approximate" and clf.epsilon_spent_ == 1.0
        # no warning text carries a number other than the public epsilon
        for w in caught:
            if issubclass(w.category, ApproximateGuaranteeWarning):
                continue
            assert not re.search(r"\d\.\d", str(w.message)), str(w.message)


def test_collapse_warning_carries_no_data_value():
    from sklearn.exceptions import ConvergenceWarning

    X, y = _binary(n=300)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ExpMFlowClassifier(
            classes=[0, 1],
            epsilon=10.0,
            init="prior",
            n_iter=0,
            diagnostics=True,
            random_state=0,
            dtype="float64",
            device="cpu",
        ).fit(X, y)
    collapse = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert collapse
    for w in collapse:
        assert not re.search(r"\d", str(w.message)), str(w.message)


def test_verbose_shows_no_private_loss(capsys, caplog):
    """The reverse-KL loss (an un-noised function of the rows) is neither shown nor logged."""
    caplog.set_level("INFO", logger="skdp")
    X, y = _binary()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ExpMFlowClassifier(classes=[0, 1], epsilon=1.0, verbose=1, random_state=0, **_FAST).fit(
            X, y
        )
    shown = capsys.readouterr()
    progress = [r.skdp_progress for r in caplog.records if hasattr(r, "skdp_progress")]
    assert progress and all(p["loss"] is None for p in progress)
    assert "steps" in shown.err  # verbose shows the progress ...
    assert "loss" not in shown.err + shown.out  # ... without the loss
    assert not any("loss" in r.getMessage() for r in caplog.records)


def test_diagnostics_opt_in_is_reported_as_non_private():
    X, y = _binary()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = ExpMFlowClassifier(
            classes=[0, 1], epsilon=1.0, diagnostics=True, random_state=0, **_FAST
        ).fit(X, y)
    assert math.isfinite(clf.flow_diagnostics_["log_z_estimate"])
    assert clf.epsilon_spent_ == math.inf and clf.privacy_guarantee_ == "none"

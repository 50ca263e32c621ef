"""Attack: learn which levels occur in the private rows from fitted metadata (issue 15
item 4).

``df.astype("category")`` builds its categories from the rows. When a synthesizer took a
pandas ``CategoricalDtype``'s categories as declared, adding one record with a rare level
("HIV") changed ``schema_``, ``n_bins_``, ``n_encoded_features_`` and the dtype of every
synthetic sample, while ``privacy_guarantee_`` said ``"exact"``: one look at a released
model or sample told whether that record was in the data. ``ExpMFlowClassifier(
classes=None)`` likewise read the label set off ``y`` (and its error message printed the
observed number of classes).

Rule (spec README section 2 row 8): categories and class labels come only from the
user's declaration (``categories=``, ``schema=``, ``classes=``) or from the explicit
``"data"`` opt-in, which warns with :class:`~skdp.exceptions.PrivacyLeakWarning` and makes
the fit non-private. Every discovered estimator with a ``categories`` or ``classes``
parameter is attacked (fast settings from ``tests/test_common.py``), so a new one is
covered without editing this file. The tests marked "attack" succeeded before the fix;
the declared-metadata tests are the control that a declaration makes the fitted
metadata independent of the rows.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.discovery import all_estimators
from skdp.exceptions import PrivacyLeakWarning
from skdp.utils.schema import TabularSchema

ESTIMATORS = all_estimators()


def _test_params():
    path = pathlib.Path(__file__).resolve().parents[1] / "test_common.py"
    spec = importlib.util.spec_from_file_location("_skdp_test_common_cats", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TEST_PARAMS


TEST_PARAMS = _test_params()

# Estimators of mixed tables (numeric bounds and categories: the synthesizers). The
# one-hot encoder (categorical columns only) is attacked on its own below.
WITH_CATEGORIES = [
    (n, c) for n, c in ESTIMATORS if {"categories", "bounds"} <= set(c().get_params())
]
WITH_CLASSES = [(n, c) for n, c in ESTIMATORS if "classes" in c().get_params()]

# What each estimator needs for its ``classes`` to be used at all.
_LABELLED = {"DPGANSynthesizer": {"conditional": "acgan"}}

BOUNDS = {"age": (0.0, 100.0)}  # declared, so that only the categories can differ
LEVELS = ["cold", "flu", "HIV", "other"]  # public list of possible diagnoses


def _make(cls, **overrides):
    params = dict(TEST_PARAMS.get(cls.__name__, {}))
    params.update(overrides)
    return cls(**params)


def _neighbours(n=60, seed=0):
    """D, and D' = D with one more record, whose diagnosis is a rare level.

    Both have their categories built from the rows, as ``astype("category")`` does.
    """
    rng = np.random.default_rng(seed)
    rows = pd.DataFrame(
        {
            "age": rng.uniform(20.0, 80.0, size=n),
            "diag": rng.choice(["cold", "flu"], size=n).astype(object),
        }
    )
    extra = pd.DataFrame({"age": [41.0], "diag": ["HIV"]})
    D = rows.astype({"diag": "category"})
    D2 = pd.concat([rows, extra], ignore_index=True).astype({"diag": "category"})
    assert list(D["diag"].cat.categories) != list(D2["diag"].cat.categories)
    return D, D2


def _fit(est, X, y=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # advisory warnings; leak warnings are tested below
        return est.fit(X) if y is None else est.fit(X, y)


def _fitted_metadata(est):
    out = {}
    for name in ("schema_", "n_bins_", "n_encoded_features_", "classes_"):
        if hasattr(est, name):
            value = getattr(est, name)
            out[name] = list(value) if isinstance(value, np.ndarray) else value
    return out


def _sample_dtypes(est):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        S = est.sample(5)
    S = S[0] if isinstance(S, tuple) else S
    return list(S.dtypes) if hasattr(S, "dtypes") else S.dtype


# ------------------------------------------------------------------ categories
def test_attack_schema_does_not_trust_pandas_categories():
    D, D2 = _neighbours()
    for X in (D, D2):
        with pytest.raises(ValueError, match="diag") as info:
            TabularSchema.from_data(X, bounds=BOUNDS)
        msg = str(info.value)
        assert "categories=" in msg  # says how to declare them
        for level in ("cold", "flu", "HIV"):
            assert level not in msg  # never a data value


@pytest.mark.parametrize(
    "cls", [c for _, c in WITH_CATEGORIES], ids=[n for n, _ in WITH_CATEGORIES]
)
def test_attack_pandas_categories_are_not_declarations(cls):
    """Without a declaration the fit refuses, for D and for D' alike (before the fix both
    fitted, and D' released the rare level in its schema, widths and sample dtypes)."""
    D, D2 = _neighbours()
    for X in (D, D2):
        with pytest.raises(ValueError, match="diag") as info:
            _fit(_make(cls, bounds=BOUNDS), X)
        assert "HIV" not in str(info.value) and "flu" not in str(info.value)


@pytest.mark.parametrize(
    "cls", [c for _, c in WITH_CATEGORIES], ids=[n for n, _ in WITH_CATEGORIES]
)
def test_declared_categories_make_metadata_independent_of_the_rows(cls):
    D, D2 = _neighbours()
    a = _fit(_make(cls, bounds=BOUNDS, categories={"diag": LEVELS}), D)
    b = _fit(_make(cls, bounds=BOUNDS, categories={"diag": LEVELS}), D2)
    assert _fitted_metadata(a) == _fitted_metadata(b)
    assert a.schema_["diag"].categories == tuple(LEVELS)
    assert _sample_dtypes(a) == _sample_dtypes(b)


@pytest.mark.parametrize(
    "cls", [c for _, c in WITH_CATEGORIES], ids=[n for n, _ in WITH_CATEGORIES]
)
def test_categories_data_opt_in_warns_and_is_not_private(cls):
    D, _ = _neighbours()
    est = _make(cls, bounds=BOUNDS, categories="data")
    with pytest.warns(PrivacyLeakWarning, match="categories"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("always", PrivacyLeakWarning)
            est.fit(D)
    assert est.privacy_guarantee_ == "none" and est.epsilon_spent_ == float("inf")


def test_attack_one_hot_encoder_does_not_trust_pandas_categories():
    """The encoder refuses D and D' alike without a declaration; with one, the fitted
    encoder (width, names) is the same on both."""
    from skdp.preprocessing import PublicOneHotEncoder

    D, D2 = (X[["diag"]] for X in _neighbours())
    for X in (D, D2):
        with pytest.raises(ValueError, match="diag") as info:
            PublicOneHotEncoder().fit(X)
        assert "HIV" not in str(info.value) and "flu" not in str(info.value)
    a = PublicOneHotEncoder(categories={"diag": LEVELS}).fit(D)
    b = PublicOneHotEncoder(categories={"diag": LEVELS}).fit(D2)
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())
    assert a.transform(D).shape[1] == b.transform(D2).shape[1] == len(LEVELS)
    with pytest.warns(PrivacyLeakWarning, match="categories"):
        est = PublicOneHotEncoder(categories="data").fit(D2)
    assert est.privacy_guarantee_ == "none" and est.epsilon_spent_ == float("inf")


# --------------------------------------------------------------------- classes
def _labelled(n=60, seed=0, labels=(0, 1)):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    y = np.where(X[:, 0] > 0, labels[1], labels[0])
    y[:2] = labels[:2]
    return X, y


@pytest.mark.parametrize("cls", [c for _, c in WITH_CLASSES], ids=[n for n, _ in WITH_CLASSES])
def test_attack_classes_are_not_read_off_y(cls):
    """``classes=None`` refuses to fit rather than take the label set from ``y``."""
    X, y = _labelled()
    est = _make(cls, classes=None, **_LABELLED.get(cls.__name__, {}))
    with pytest.raises(ValueError, match=r"classes=") as info:
        _fit(est, X, y)
    assert not re.search(r"\d", str(info.value))  # no count of the observed classes


@pytest.mark.parametrize("cls", [c for _, c in WITH_CLASSES], ids=[n for n, _ in WITH_CLASSES])
def test_declared_classes_make_classes_independent_of_the_rows(cls):
    X, y = _labelled()
    only_zeros = np.zeros_like(y)
    extra = _LABELLED.get(cls.__name__, {})
    a = _fit(_make(cls, classes=[0, 1], **extra), X, y)
    b = _fit(_make(cls, classes=[0, 1], **extra), X, only_zeros)
    assert list(a.classes_) == list(b.classes_) == [0, 1]


@pytest.mark.parametrize("cls", [c for _, c in WITH_CLASSES], ids=[n for n, _ in WITH_CLASSES])
def test_classes_data_opt_in_warns_and_is_not_private(cls):
    X, y = _labelled()
    est = _make(cls, classes="data", **_LABELLED.get(cls.__name__, {}))
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("always", PrivacyLeakWarning)
            est.fit(X, y)
    assert est.privacy_guarantee_ == "none" and est.epsilon_spent_ == float("inf")


def test_attack_binary_classifier_error_prints_no_class_count():
    """Before the fix: "y must hold exactly two classes (got 3 class)" told how many labels
    the private rows hold (with one rare label in one row: that the row is present)."""
    from skdp.linear_model import ExpMFlowClassifier

    X, y = _labelled(labels=("cold", "flu"))
    y = y.astype(object)
    y[5] = "HIV"
    est = _make(ExpMFlowClassifier, classes="data")
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ValueError, match="two") as info:
        est.fit(X, y)
    assert "3" not in str(info.value) and "HIV" not in str(info.value)

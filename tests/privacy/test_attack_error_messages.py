"""Attack: read private values out of error messages (issue 15 item 8).

scikit-learn's and numpy's validation errors print the data they reject: a 1-D ``X``
gives "Expected 2D array, got 1D array instead: array=[0.12345679 ...]", a string cell
"could not convert string to float: '<the cell>'", complex input "Complex data not
supported" followed by the whole matrix. Error messages end up in logs, notebooks and
bug reports, and a chained exception (``__cause__``, or ``__context__`` unless
suppressed) is printed with the traceback. Here every entry point is fed inputs that
carry sentinel values, and neither the raised message, its ``args``, its notes, any
exception in its chain, nor any warning emitted on the way may contain a sentinel.

Every discovered estimator (:func:`skdp.discovery.all_estimators`, with the fast
settings of ``tests/test_common.py``) is attacked through ``fit`` and through every
public method that takes ``X`` after fitting, so a new estimator is covered without
editing this file. Before the fix every estimator attack and every DP-metric attack
succeeded (``DPGANSynthesizer`` has no method that takes ``X`` after fitting, so
its second test checks nothing yet), and the encoder silently dropped the imaginary part
of a complex value in a numeric column. The CLI attack already failed before the fix: it
guards that entry point against regressions.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import is_classifier, is_regressor

from skdp.discovery import all_estimators
from skdp.metrics import dp_accuracy_score, dp_average_precision_score, dp_roc_auc_score
from skdp.utils.schema import TabularEncoder, TabularSchema
from tests.survival._targets import is_survival, survival_data

ESTIMATORS = all_estimators()
IDS = [name for name, _ in ESTIMATORS]

SECRET = "SENTINEL_SECRET"
BIG = 123456.789  # printed by numpy as 123456.789 or 1.23456789e+05
CPLX = 7777 + 3333j  # printed as 7777.+3333.j
NEEDLES = (SECRET, "23456", "7777", "3333")


def _test_params():
    path = pathlib.Path(__file__).resolve().parents[1] / "test_common.py"
    spec = importlib.util.spec_from_file_location("_skdp_test_common_msgs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TEST_PARAMS


TEST_PARAMS = _test_params()


def _texts(exc):
    """Every text an exception shows: message, args, notes, and its whole chain."""
    out, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        out.append(str(exc))
        out.extend(repr(a) for a in exc.args)
        out.extend(getattr(exc, "__notes__", ()))
        nxt = exc.__cause__
        if nxt is None and not exc.__suppress_context__:
            nxt = exc.__context__
        exc = nxt
    return out


def _assert_clean(call, what):
    """``call()`` must raise, and nothing it raises or warns may carry a sentinel."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises((ValueError, TypeError)) as info:
            call()
    texts = _texts(info.value) + [str(w.message) for w in caught]
    for text in texts:
        for needle in NEEDLES:
            assert needle not in text, f"{what}: the message shows the data ({needle!r}):\n{text}"
    return info.value


def _make(cls):
    return cls(**TEST_PARAMS.get(cls.__name__, {}))


def _good(est, n=40, seed=0):
    if is_survival(est):  # a structured (event, time) target; no X for a curve
        return survival_data(est, n, seed)
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    if is_classifier(est):
        y = (X[:, 0] > 0).astype(int)
        y[:2] = [0, 1]
    elif is_regressor(est):
        y = np.clip(0.5 * X[:, 0] - 0.3 * X[:, 1], -1, 1)
    else:
        y = None
    return X, y


def _bad_X(n=40):
    """Inputs whose messages used to show the sentinels."""
    rng = np.random.default_rng(1)
    good = rng.uniform(-1.0, 1.0, size=(n, 2))
    strings = good.astype(object)
    strings[n // 2, 0] = SECRET
    complex_ = good.astype(complex)
    complex_[:, 0] = CPLX
    a_dict = good.astype(object)
    a_dict[3, 1] = {SECRET: BIG}
    frame = pd.DataFrame({"a": good[:, 0].astype(object), "b": good[:, 1]})
    frame.loc[5, "a"] = SECRET
    return {
        "1-D X": np.full(n, BIG),
        "scalar X": np.float64(BIG),
        "string cell": strings,
        "string cell in a DataFrame": frame,
        "complex X": complex_,
        "dict cell": a_dict,
        "3-D X": np.full((n, 2, 2), BIG),
    }


def _bad_y(est, n=40):
    if is_regressor(est):
        y_str = np.full(n, 0.5, dtype=object)
        y_str[7] = SECRET
        return {"string in y": y_str, "complex y": np.full(n, CPLX), "2-D y": np.full((n, 3), BIG)}
    if is_classifier(est):
        y_cplx = np.where(np.arange(n) % 2 == 0, CPLX, 0)
        y_mixed = np.array([0, 1] * (n // 2), dtype=object)
        y_mixed[4] = SECRET
        y_float = np.full(n, BIG)
        y_float[::2] = 0.0
        return {
            "complex y": y_cplx,
            "mixed label types": y_mixed,
            "continuous y": y_float,
            "2-D y": np.full((n, 3), BIG),
        }
    return {}


def _fit(est, X, y):
    if X is None:  # a survival curve
        return est.fit(y)
    return est.fit(X) if y is None else est.fit(X, y)


@pytest.mark.parametrize("cls", [c for _, c in ESTIMATORS], ids=IDS)
def test_fit_errors_carry_no_data(cls):
    est = _make(cls)
    _, y = _good(est)
    for what, X in _bad_X().items():
        _assert_clean(lambda X=X: _fit(_make(cls), X, y), f"{cls.__name__}.fit({what})")
    X, _ = _good(est)
    for what, y_bad in _bad_y(est).items():
        _assert_clean(lambda y_bad=y_bad: _make(cls).fit(X, y_bad), f"{cls.__name__}.fit({what})")


_METHODS = ("predict", "predict_proba", "decision_function", "score_samples", "transform", "elbo")


@pytest.mark.parametrize("cls", [c for _, c in ESTIMATORS], ids=IDS)
def test_predict_errors_carry_no_data(cls):
    est = _make(cls)
    X, y = _good(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _fit(est, X, y)
    methods = [m for m in _METHODS if hasattr(est, m)]
    bad = _bad_X()
    for m in methods:
        for what, Xb in bad.items():
            _assert_clean(lambda m=m, Xb=Xb: getattr(est, m)(Xb), f"{cls.__name__}.{m}({what})")
    if hasattr(est, "score"):
        for what, Xb in bad.items():
            if y is None:
                call = lambda Xb=Xb: est.score(Xb)  # noqa: E731
            else:
                call = lambda Xb=Xb: est.score(Xb, y)  # noqa: E731
            _assert_clean(call, f"{cls.__name__}.score({what})")


# ------------------------------------------------------------------ public functions
_METRICS = {
    "dp_roc_auc_score": dp_roc_auc_score,
    "dp_average_precision_score": dp_average_precision_score,
    "dp_accuracy_score": dp_accuracy_score,
}


@pytest.mark.parametrize("metric", list(_METRICS.values()), ids=list(_METRICS))
def test_dp_metric_errors_carry_no_data(metric):
    n = 20
    y = np.array([0, 1] * (n // 2))
    s = np.linspace(0.0, 1.0, n)
    y_cplx = np.where(y == 1, CPLX, 0)
    s_cplx = s + 0j
    s_cplx[3] = CPLX
    s_dict = s.astype(object)
    s_dict[2] = {SECRET: BIG}
    cases = {
        "complex y_true": (y_cplx, s),
        "complex score": (y, s_cplx),
        "scalar y_true": (BIG, s),
        "2-D y_true": (np.full((n, 2), BIG), s),
        "2-D score": (y, np.full((n, 2), BIG)),
        "dict in score": (y, s_dict),
    }
    for what, (yt, ys) in cases.items():
        _assert_clean(
            lambda yt=yt, ys=ys: metric(yt, ys, epsilon=1.0, random_state=0),
            f"{metric.__name__}({what})",
        )


def test_schema_and_encoder_errors_carry_no_data():
    df = pd.DataFrame({"x": [0.5, 0.1, 0.9, 0.3], "city": ["Oslo", "Rome", "Oslo", "Rome"]})
    bad_num = df.assign(x=df["x"].astype(object))
    bad_num.loc[2, "x"] = SECRET
    meta = dict(bounds={"x": (0.0, 1.0)}, categories={"city": ["Oslo", "Rome"]})
    _assert_clean(lambda: TabularSchema.from_data(np.full(5, BIG), bounds=(0, 1)), "1-D X")
    _assert_clean(
        lambda: TabularSchema.from_data(
            bad_num,
            bounds="data",
            categories={"city": ["Oslo", "Rome"]},
            column_types={"x": "continuous"},
        ),
        'string in a numeric column (bounds="data")',
    )
    schema = TabularSchema.from_data(df, **meta)
    enc = TabularEncoder(schema)
    unknown = df.copy()
    unknown.loc[1, "city"] = SECRET
    _assert_clean(lambda: enc.transform(unknown), "unknown category")
    _assert_clean(lambda: enc.transform(bad_num), "string in a numeric column")
    cplx = df.assign(x=df["x"].astype(complex))
    cplx.loc[0, "x"] = CPLX
    _assert_clean(lambda: enc.transform(cplx), "complex value in a numeric column")


# ----------------------------------------------------------------------------- CLI
def test_cli_errors_carry_no_data(tmp_path, capsys):
    from skdp.cli import main

    schema = {
        "columns": [
            {"name": "age", "kind": "integer", "bounds": [18, 90]},
            {"name": "city", "kind": "categorical", "categories": ["Oslo", "Rome"]},
        ],
        "input_type": "dataframe",
    }
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    rows = {
        "string in a numeric column": f"age,city\n30,Oslo\n{SECRET},Rome\n41,Oslo\n",
        "unknown category": f"age,city\n30,Oslo\n52,{SECRET}\n41,Oslo\n",
        "non-integer in an integer column": "age,city\n30,Oslo\n23456.5,Rome\n41,Oslo\n",
    }
    for what, text in rows.items():
        (tmp_path / "in.csv").write_text(text)
        code = main(
            [
                "synthesize",
                str(tmp_path / "in.csv"),
                "--schema",
                str(tmp_path / "schema.json"),
                "--epsilon",
                "1",
                "-o",
                str(tmp_path / "out.csv"),
                "-q",
            ]
        )
        out = capsys.readouterr()
        assert code == 1, what
        for needle in NEEDLES:
            assert needle not in out.err + out.out, f"CLI ({what}) shows the data"


# ---------------------------------------------------- the checks' wording is kept
def test_sklearn_wording_is_kept_without_the_data():
    """scikit-learn's common checks match on these phrases; they stay, the data goes."""
    cls = dict(ESTIMATORS)["DPLinearRegression"]
    bad = _bad_X()
    y = np.zeros(40)
    err = _assert_clean(lambda: _make(cls).fit(bad["1-D X"], y), "1-D")
    assert "Expected 2D array" in str(err) and "Reshape your data" in str(err)
    err = _assert_clean(lambda: _make(cls).fit(bad["complex X"], y), "complex")
    assert "Complex data not supported" in str(err)
    err = _assert_clean(lambda: _make(cls).fit(bad["string cell"], y), "string")
    assert "could not convert" in str(err) and "X (column 0)" in str(err)
    err = _assert_clean(lambda: _make(cls).fit(bad["string cell in a DataFrame"], y), "frame")
    assert "column 'a'" in str(err)
    err = _assert_clean(lambda: _make(cls).fit(bad["dict cell"], y), "dict")
    assert isinstance(err, TypeError)
    assert "argument must be a string or a real number" in str(err)
    y_str = np.full(40, 0.5, dtype=object)
    y_str[7] = SECRET
    X_ok = np.zeros((40, 2))
    err = _assert_clean(lambda: _make(cls).fit(X_ok, y_str), "string in y")
    assert str(err).startswith("y")
    assert err.__cause__ is None and err.__context__ is None

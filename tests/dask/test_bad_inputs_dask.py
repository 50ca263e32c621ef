"""The bad-input contract on Dask input (issue 30): inputs that do not line up (rows,
chunks, partitions) and collections whose metadata lies about their partitions.

The cases are a product, bad Dask input x entry point, over every entry point that takes
numeric Dask input, classified by ``classify`` of ``tests/test_bad_inputs.py`` with one
rule more: a ``ValueError``/``TypeError`` raised from inside Dask itself (``Chunks do not
add up to shape`` from ``dask/array/core.py``, ``The columns in the computed data do not
match`` from ``dask/dataframe/utils.py``) is the wrong kind, as one from inside numpy is.
The planted sentinel sits in the lying partitions: numpy's "could not convert string to
float: '...'" used to print it.
"""

from __future__ import annotations

import importlib.util
import pathlib
import traceback

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")


def _bad_inputs_module():
    path = pathlib.Path(__file__).resolve().parent.parent / "test_bad_inputs.py"
    spec = importlib.util.spec_from_file_location("_skdp_test_bad_inputs_dask", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BI = _bad_inputs_module()
SENTINEL, SENTINEL_TEXT = _BI.SENTINEL, _BI.SENTINEL_TEXT
_DASK = _BI._package_dirs("dask", "distributed")


def classify(fn):
    """``classify`` of the main table, and an error raised inside Dask is the wrong kind."""
    caught = []

    def run():
        try:
            return fn()
        except Exception as exc:
            caught.append(exc)
            raise

    outcome, detail = _BI.classify(run)
    if outcome == "error_ok" and caught:
        frames = traceback.extract_tb(caught[0].__traceback__)
        where = str(pathlib.Path(frames[-1].filename).resolve()) if frames else ""
        if where.startswith(_DASK):
            return "wrong_kind", f"raised inside Dask ({where}): {detail}"
    return outcome, detail


# ------------------------------------------------------------------ entry points
N, PARTS = 40, 4


def _data(kind):
    """``(main, y)`` in memory: ``main`` is X (2-D) or a score/prediction column (1-D)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, (N, 2)), columns=["a", "b"])
    if kind == "regression":
        return X, np.clip(X.to_numpy() @ [0.5, -0.3], -1, 1)
    if kind == "unsupervised":
        return X, None
    if kind == "binary_atoms":
        return (X > 0).astype(np.float64), (X["a"] > 0).to_numpy().astype(np.int64)
    labels = (X["a"] > 0).to_numpy().astype(np.int64)
    if kind == "scores":
        return X["b"].rename("score"), labels
    return pd.Series(np.roll(labels, 3).astype(np.float64), name="pred"), labels  # "labels"


def _fitted_classifier():
    from sklearn.linear_model import LogisticRegression

    X, y = _data("binary_atoms")
    return LogisticRegression().fit(_data("regression")[0], y)


def _entry_points():
    from skdp.cluster import SubsampledExpMedian
    from skdp.ilp import DPILPClassifier
    from skdp.linear_model import DPLinearRegression
    from skdp.metrics import (
        dp_accuracy_score,
        dp_average_precision_score,
        dp_roc_auc_score,
        make_dp_scorer,
    )
    from skdp.synthesis import DPHistogramSynthesizer, DPMarginalSynthesizer

    lin = dict(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-1, 1), random_state=0)
    return {  # name: (data kind, fn(main, y) -> output)
        "DPLinearRegression.fit": (
            "regression",
            lambda X, y: DPLinearRegression(**lin).fit(X, y).coef_,
        ),
        "DPLinearRegression(gaussian).fit": (
            "regression",
            lambda X, y: (
                DPLinearRegression(**lin, mechanism="gaussian", delta=1e-5).fit(X, y).coef_
            ),
        ),
        "SubsampledExpMedian.fit": (
            "unsupervised",
            lambda X, y: (
                SubsampledExpMedian(n_clusters=2, epsilon=1.0, bounds=(-1, 1), random_state=0)
                .fit(X)
                .cluster_centers_
            ),
        ),
        "DPHistogramSynthesizer.fit": (
            "unsupervised",
            lambda X, y: (
                DPHistogramSynthesizer(epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X).sample(5)
            ),
        ),
        "DPMarginalSynthesizer.fit": (
            "unsupervised",
            lambda X, y: (
                DPMarginalSynthesizer(epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X).sample(5)
            ),
        ),
        "DPILPClassifier.fit": (
            "binary_atoms",
            lambda X, y: (
                DPILPClassifier(epsilon=1.0, random_state=0).fit(X, y).predict(np.zeros((2, 2)))
            ),
        ),
        "dp_accuracy_score": (
            "labels",
            lambda p, y: dp_accuracy_score(y, p, epsilon=1.0, random_state=0),
        ),
        "dp_roc_auc_score": (
            "scores",
            lambda s, y: dp_roc_auc_score(y, s, epsilon=1.0, delta=1e-5, random_state=0),
        ),
        "dp_average_precision_score": (
            "scores",
            lambda s, y: dp_average_precision_score(y, s, epsilon=1.0, delta=1e-5, random_state=0),
        ),
        "make_dp_scorer('roc_auc')": (
            "regression",
            lambda X, y: make_dp_scorer("roc_auc", epsilon=1.0, delta=1e-5, random_state=0)(
                _fitted_classifier(), X, (np.asarray(y) > 0).astype(np.int64)
            ),
        ),
    }


ENTRY_POINTS = _entry_points()


# --------------------------------------------------------------- bad Dask inputs
def _frame(x, npartitions=PARTS):
    return dd.from_pandas(x, npartitions=npartitions, sort=False)


def _lying(x, change):
    """A Dask collection whose partitions are ``change(partition)`` while its metadata
    stays that of ``x`` (a ``map_partitions`` with a wrong ``meta=``)."""
    honest = _frame(x)
    return honest.map_partitions(change, meta=honest._meta)


def _first_column(part, values):
    part = part.copy()
    if isinstance(part, pd.Series):
        return pd.Series(values(len(part)), index=part.index, name=part.name)
    part[part.columns[0]] = values(len(part))
    return part


def _text(n):
    return np.array([f"v{SENTINEL}"] * n, dtype=object)


def _none(n):
    return np.array([None] + [SENTINEL] * (n - 1), dtype=object)


def _ints(n):
    return np.zeros(n, dtype=np.int64)


def _renamed(part):
    return part.rename(columns={part.columns[0]: "zz"}) if hasattr(part, "columns") else part


def _extra(part):
    if not hasattr(part, "columns"):
        return part.to_frame().assign(extra=SENTINEL)
    return part.assign(extra=SENTINEL)


# name: (fn(main, y) -> (main', y'), needs y, expected outcome)
BAD_DASK = {
    # rows that do not line up
    "y_shorter_dask_array": (
        lambda m, y: (_frame(m), da.from_array(np.asarray(y)[:30], chunks=10)),
        True,
        "error_ok",
    ),
    "y_shorter_numpy": (lambda m, y: (_frame(m), np.asarray(y)[:30]), True, "error_ok"),
    "y_shorter_same_npartitions": (
        lambda m, y: (_frame(m), _frame(pd.Series(np.asarray(y)[:36], name="y"))),
        True,
        "error_ok",
    ),
    "y_longer_dask_array": (
        lambda m, y: (_frame(m), da.from_array(np.r_[y, y[:5]], chunks=15)),
        True,
        "error_ok",
    ),
    "array_y_shorter": (
        lambda m, y: (da.from_array(m.to_numpy(), chunks=10), da.from_array(y[:30], chunks=7)),
        True,
        "error_ok",
    ),
    # chunks and partitions that differ but line up: handled
    "y_other_chunks": (
        lambda m, y: (
            da.from_array(m.to_numpy(), chunks=10),
            da.from_array(np.asarray(y), chunks=(15, 15, 10)),
        ),
        True,
        "handled",
    ),
    "y_other_npartitions": (
        lambda m, y: (_frame(m), _frame(pd.Series(np.asarray(y), name="y"), 3)),
        True,
        "handled",
    ),
    # metadata that lies about the partitions
    "meta_text_in_numeric": (
        lambda m, y: (_lying(m, lambda p: _first_column(p, _text)), y),
        False,
        "error_ok",
    ),
    "meta_none_in_numeric": (
        lambda m, y: (_lying(m, lambda p: _first_column(p, _none)), y),
        False,
        "error_ok",
    ),
    "meta_columns_renamed": (lambda m, y: (_lying(m, _renamed), y), False, "error_ok"),
    "meta_extra_column": (lambda m, y: (_lying(m, _extra), y), False, "error_ok"),
    "meta_ints_under_float": (  # exact cast: handled like the honest collection
        lambda m, y: (_lying(m, lambda p: _first_column(p, _ints)), y),
        False,
        "handled",
    ),
}


def _cases():
    out = []
    for entry, (kind, _) in ENTRY_POINTS.items():
        for case, (_, needs_y, want) in BAD_DASK.items():
            if needs_y and kind == "unsupervised":
                continue
            if kind in ("labels", "scores") and case.startswith("array_"):
                continue  # 1-D inputs: the Series cases cover them
            if entry.startswith("make_dp_scorer") and needs_y:
                continue  # y of a scorer call is the metric's (the dp_*_score cases)
            if kind in ("labels", "scores") and case == "meta_columns_renamed":
                want = "handled"  # a Series' name is not read
            out.append(pytest.param(entry, case, want, id=f"{entry}|{case}"))
    return out


@pytest.mark.parametrize(("entry", "case", "want"), _cases())
def test_dask_bad_input_contract(sync_scheduler, entry, case, want):
    kind, fn = ENTRY_POINTS[entry]
    build = BAD_DASK[case][0]
    main, y = _data(kind)
    if kind == "unsupervised":
        main2, _ = build(main, np.zeros(N))
        args = (main2, None)
    else:
        args = build(main, y)
    outcome, detail = classify(lambda: fn(*args))
    if want == "handled":
        assert outcome == "handled", f"{outcome}: {detail}"
    assert outcome in ("error_ok", "handled"), f"{outcome}: {detail}"
    if case.startswith("meta_") and want == "error_ok":
        assert outcome == "error_ok", f"{outcome}: {detail}"


# ---------------------------------------------------------------- specific checks
def test_lying_partition_error_names_parameter_and_column(sync_scheduler):
    from skdp.linear_model import DPLinearRegression
    from skdp.metrics import dp_roc_auc_score

    X, y = _data("regression")
    Xl = _lying(X, lambda p: _first_column(p, _text))
    est = DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-1, 1), random_state=0)
    with pytest.raises(TypeError, match=r"X: column 'a' of a partition has dtype") as info:
        est.fit(Xl, y)
    assert SENTINEL_TEXT not in str(info.value)
    s, labels = _data("scores")
    with pytest.raises(TypeError, match=r"y_score: a partition of the Dask Series") as info:
        dp_roc_auc_score(labels, _lying(s, lambda p: _first_column(p, _text)), epsilon=1.0)
    assert SENTINEL_TEXT not in str(info.value)


def test_mismatched_rows_name_both_inputs(sync_scheduler):
    from skdp.linear_model import DPLinearRegression

    X, y = _data("regression")
    est = DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-1, 1), random_state=0)
    with pytest.raises(ValueError, match=r"X and y have inconsistent numbers of samples"):
        est.fit(_frame(X), da.from_array(y[:30], chunks=10))


def test_exact_cast_of_a_lying_partition_gives_the_honest_release(sync_scheduler):
    """int64 partitions under a declared float64: cast exactly, the same release."""
    from skdp.linear_model import DPLinearRegression

    X, y = _data("regression")
    X = X.round() + 0.0  # whole values (no -0.0), so int64 partitions hold the same
    lying = _lying(X, lambda p: p.astype(np.int64))
    est = DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-1, 1), random_state=0)
    ref = est.fit(_frame(X), y).coef_
    assert np.array_equal(est.fit(lying, y).coef_, ref)


def test_lossy_cast_under_a_declared_int_is_refused(sync_scheduler):
    """Floats (0.5, ...) under a declared int64: refused, never truncated silently."""
    from skdp.ilp import DPILPClassifier

    X, y = _data("binary_atoms")
    X = X.astype(np.int64)
    lying = _lying(X, lambda p: _first_column(p, lambda n: np.full(n, 0.5)))
    outcome, detail = classify(lambda: DPILPClassifier(epsilon=1.0, random_state=0).fit(lying, y))
    assert outcome == "error_ok" and "has dtype float64" in detail, f"{outcome}: {detail}"


def test_functional_release_block_message_has_no_value():
    """The row function itself (any caller, not only a Dask partition) converts without
    quoting the cell that failed."""
    from skdp.linear_model._functional_release import _scaled_gram_block

    X = np.array([[f"v{SENTINEL}", "1"]], dtype=object)
    args = (np.zeros(2) - 1, np.ones(2), -1.0, 1.0, np.ones(2), np.zeros(2), 1.0, 0.0)
    with pytest.raises(ValueError) as info:
        _scaled_gram_block(X, np.zeros(1), *args, True, ["a", "b"])
    assert SENTINEL_TEXT not in str(info.value)


def test_lying_meta_on_a_distributed_cluster(dask_client):
    """The same errors when the partitions are computed by worker processes (no time
    limit here: the first task on a fresh cluster imports skdp in the workers)."""
    from skdp.linear_model import DPLinearRegression
    from skdp.synthesis import DPHistogramSynthesizer

    X, y = _data("regression")
    est = DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-1, 1), random_state=0)
    with pytest.raises(TypeError, match=r"X: column 'a' of a partition") as info:
        est.fit(_lying(X, lambda p: _first_column(p, _text)), y)
    assert SENTINEL_TEXT not in str(info.value)
    hist = DPHistogramSynthesizer(epsilon=1.0, bounds=(-1, 1), random_state=0)
    with pytest.raises(ValueError, match=r"Dask could not compute a partition") as info:
        hist.fit(_lying(X, _renamed))
    assert SENTINEL_TEXT not in str(info.value)

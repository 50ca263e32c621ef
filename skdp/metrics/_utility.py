"""Utility metrics for synthetic data (Beaulieu-Jones et al. 2019; Torfi et al. 2022).

These compare synthetic records with *real* ones. They are **not** private: they read the
real data without noise, so they are evaluation tools for benchmarks and for a data holder
judging a release, never part of a release and never called inside ``fit``.

Inputs are array-likes or pandas DataFrames with the same columns. DataFrames are turned
into numbers by :func:`numeric_view`: numeric and boolean columns as they are, other
columns one-hot over the levels seen in either table (fine here: nothing is released).

* :func:`dimension_wise_statistics`, :func:`dimension_wise_probability`
* :func:`dimension_wise_prediction` (Torfi et al. 2022, §V-D)
* :func:`correlation_distance`, :func:`correlation_similarity` (Beaulieu-Jones et al. 2019,
  Fig. 2)
* :func:`maximum_mean_discrepancy` (Torfi et al. 2022, §V-D)
* :func:`marginal_total_variation` (1- and 2-way)
* :func:`tstr_score` (train on synthetic, test on real, any scikit-learn estimator)
"""

from __future__ import annotations

import itertools
import math
from numbers import Integral

import numpy as np

__all__ = [
    "correlation_distance",
    "correlation_similarity",
    "dimension_wise_prediction",
    "dimension_wise_probability",
    "dimension_wise_statistics",
    "marginal_total_variation",
    "maximum_mean_discrepancy",
    "numeric_view",
    "tstr_score",
]


def _is_dataframe(X) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def numeric_view(X_real, X_syn):
    """Both tables as float matrices with the same columns.

    Parameters
    ----------
    X_real, X_syn : array-like or DataFrame
        Same number of columns (same names for DataFrames).

    Returns
    -------
    R, S : ndarray of shape (n_real, p), (n_syn, p)
    names : list of str
        Column names (``"col=level"`` for one-hot columns).
    """
    if _is_dataframe(X_real) or _is_dataframe(X_syn):
        import pandas as pd

        A, B = pd.DataFrame(X_real), pd.DataFrame(X_syn)
        if list(A.columns) != list(B.columns):
            raise ValueError("X_real and X_syn must have the same columns in the same order")
        ra, rb, names = [], [], []
        for col in A.columns:
            a, b = A[col], B[col]
            num = pd.api.types.is_numeric_dtype(a.dtype) and pd.api.types.is_numeric_dtype(b.dtype)
            if num and not isinstance(a.dtype, pd.CategoricalDtype):
                ra.append(a.to_numpy(dtype=float))
                rb.append(b.to_numpy(dtype=float))
                names.append(str(col))
            else:
                av, bv = a.astype(object).to_numpy(), b.astype(object).to_numpy()
                levels = list(dict.fromkeys([*pd.unique(av), *pd.unique(bv)]))
                for lev in levels:
                    ra.append((av == lev).astype(float))
                    rb.append((bv == lev).astype(float))
                    names.append(f"{col}={lev}")
        R = np.column_stack(ra) if ra else np.zeros((len(A), 0))
        S = np.column_stack(rb) if rb else np.zeros((len(B), 0))
    else:
        R = np.asarray(X_real, dtype=float)
        S = np.asarray(X_syn, dtype=float)
        if R.ndim == 1:
            R, S = R[:, None], np.asarray(S, dtype=float).reshape(-1, 1)
        if R.ndim != 2 or S.ndim != 2 or R.shape[1] != S.shape[1]:
            raise ValueError("X_real and X_syn must be 2-d with the same number of columns")
        names = [str(j) for j in range(R.shape[1])]
    if not (np.all(np.isfinite(R)) and np.all(np.isfinite(S))):
        raise ValueError("X_real and X_syn must not contain NaN or infinity")
    if len(R) == 0 or len(S) == 0:
        raise ValueError("X_real and X_syn must have at least one row")
    return R, S, names


def dimension_wise_statistics(X_real, X_syn):
    """Per-column mean, median and SD of both tables (Beaulieu-Jones et al. 2019, Fig. 1).

    Returns
    -------
    dict
        ``"columns"``, and ``"mean"``, ``"median"``, ``"std"``: each a dict with
        ``"real"`` and ``"synthetic"`` arrays, plus ``"mean_abs_diff"`` of the means.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.metrics import dimension_wise_statistics
    >>> out = dimension_wise_statistics(np.zeros((4, 2)), np.ones((3, 2)))
    >>> out["mean"]["synthetic"].tolist(), out["mean_abs_diff"]
    ([1.0, 1.0], 1.0)
    """
    R, S, names = numeric_view(X_real, X_syn)
    out = {"columns": names}
    for key, f in (("mean", np.mean), ("median", np.median), ("std", np.std)):
        out[key] = {"real": f(R, axis=0), "synthetic": f(S, axis=0)}
    out["mean_abs_diff"] = float(np.mean(np.abs(out["mean"]["real"] - out["mean"]["synthetic"])))
    return out


def dimension_wise_probability(X_real, X_syn):
    """Column means (probabilities for binary columns) of both tables, with their Pearson
    correlation and RMSE across columns ("dimension-wise probability" of MedGAN and of
    Torfi et al. 2022).

    Returns
    -------
    dict
        ``"real"``, ``"synthetic"`` (arrays of column means), ``"pearson"`` (nan with fewer
        than two columns or a constant vector) and ``"rmse"``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.metrics import dimension_wise_probability
    >>> R = np.array([[1, 0, 1], [1, 0, 0]]); S = np.array([[1, 0, 1], [1, 1, 0]])
    >>> out = dimension_wise_probability(R, S)
    >>> round(out["rmse"], 4)
    0.2887
    """
    R, S, _ = numeric_view(X_real, X_syn)
    pr, ps = R.mean(axis=0), S.mean(axis=0)
    if pr.size >= 2 and np.std(pr) > 0 and np.std(ps) > 0:
        r = float(np.corrcoef(pr, ps)[0, 1])
    else:
        r = math.nan
    return {
        "real": pr,
        "synthetic": ps,
        "pearson": r,
        "rmse": float(np.sqrt(np.mean((pr - ps) ** 2))),
    }


def dimension_wise_prediction(
    X_syn, X_test, *, columns=None, top_k=10, estimator=None, X_train=None, random_state=0
):
    """Dimension-wise prediction F1 (Torfi et al. 2022, §V-D): each binary column from the rest.

    For each chosen binary column ``k``, a classifier is trained on the synthetic table
    (features: the other chosen columns, as in Torfi et al.'s code) and scored with F1 on the real
    test table. With ``X_train``, the same is done on real training data as a reference.

    Parameters
    ----------
    X_syn, X_test : array-like of shape (n, p)
        Binary {0, 1} columns (other columns are not predicted; they may be features).
    columns : sequence of int, optional
        Which columns to predict; default: the ``top_k`` most frequent binary columns of
        ``X_test`` (or ``X_train`` when given).
    top_k : int, default=10
    estimator : scikit-learn classifier, optional
        Default ``LogisticRegression(max_iter=1000)``; cloned per column.
    X_train : array-like, optional
        Real training data for the reference scores.
    random_state : int, default=0
        Passed to estimators that take one.

    Returns
    -------
    dict
        ``"columns"``, ``"f1_synthetic"`` (per column), ``"mean_synthetic"``,
        ``"std_synthetic"``, and the ``"..._real"`` counterparts with ``X_train``. A column
        that is constant in the training table is predicted as that constant.
    """
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score

    S = np.asarray(X_syn, dtype=float)
    T = np.asarray(X_test, dtype=float)
    if S.ndim != 2 or T.ndim != 2 or S.shape[1] != T.shape[1]:
        raise ValueError("X_syn and X_test must be 2-d with the same number of columns")
    ref = T if X_train is None else np.asarray(X_train, dtype=float)
    binary = [j for j in range(T.shape[1]) if np.all(np.isin(ref[:, j], (0.0, 1.0)))]
    if columns is None:
        if not binary:
            raise ValueError("no binary column to predict")
        order = sorted(binary, key=lambda j: -ref[:, j].mean())
        columns = order[: int(top_k)]
    columns = [int(c) for c in columns]
    if not columns:
        raise ValueError("columns must not be empty")
    base = estimator if estimator is not None else LogisticRegression(max_iter=1000)

    def run(Xtr):
        scores = []
        for k in columns:
            feats = [j for j in columns if j != k] or [j for j in range(T.shape[1]) if j != k]
            ytr = (Xtr[:, k] > 0.5).astype(int)
            yte = (T[:, k] > 0.5).astype(int)
            if len(np.unique(ytr)) < 2 or not feats:
                pred = np.full(len(T), ytr[0] if len(ytr) else 0)
            else:
                clf = clone(base)
                if "random_state" in clf.get_params():
                    clf.set_params(random_state=random_state)
                clf.fit(Xtr[:, feats], ytr)
                pred = clf.predict(T[:, feats])
            scores.append(f1_score(yte, pred, zero_division=1.0))
        return np.asarray(scores)

    f_syn = run(S)
    out = {
        "columns": columns,
        "f1_synthetic": f_syn,
        "mean_synthetic": float(f_syn.mean()),
        "std_synthetic": float(f_syn.std()),
    }
    if X_train is not None:
        f_real = run(ref)
        out.update(f1_real=f_real, mean_real=float(f_real.mean()), std_real=float(f_real.std()))
    return out


def _corr(M):
    with np.errstate(invalid="ignore", divide="ignore"):
        C = np.corrcoef(M, rowvar=False)
    C = np.atleast_2d(C)
    return np.nan_to_num(C, nan=0.0)


def correlation_distance(X_real, X_syn, *, norm="frobenius"):
    """Distance between the Pearson correlation matrices of the two tables.

    Constant columns have correlation 0 with everything (not nan).

    Parameters
    ----------
    norm : {"frobenius", "mean_abs"}, default="frobenius"
        Frobenius norm of the difference, or mean absolute difference over the strict
        upper triangle (comparable across numbers of columns).

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.metrics import correlation_distance
    >>> X = np.random.default_rng(0).normal(size=(100, 3))
    >>> correlation_distance(X, X)
    0.0
    """
    R, S, _ = numeric_view(X_real, X_syn)
    D = _corr(R) - _corr(S)
    if norm == "frobenius":
        return float(np.linalg.norm(D))
    if norm == "mean_abs":
        iu = np.triu_indices(D.shape[0], 1)
        return float(np.mean(np.abs(D[iu]))) if iu[0].size else 0.0
    raise ValueError(f"norm must be 'frobenius' or 'mean_abs', got {norm!r}")


def correlation_similarity(X_real, X_syn):
    """Spearman correlation between the strict upper triangles of the two Pearson
    correlation matrices, and its p-value (Beaulieu-Jones et al. 2019, Fig. 2: 630 pairs for
    36 columns).

    Returns
    -------
    rho, p_value : float
    """
    from scipy.stats import spearmanr

    R, S, _ = numeric_view(X_real, X_syn)
    if R.shape[1] < 3:
        raise ValueError("correlation_similarity needs at least 3 columns")
    iu = np.triu_indices(R.shape[1], 1)
    res = spearmanr(_corr(R)[iu], _corr(S)[iu])
    return float(res.statistic), float(res.pvalue)


def maximum_mean_discrepancy(X_real, X_syn, *, max_samples=10000, random_state=0):
    """Gaussian-kernel MMD between the tables (Torfi et al. 2022, §V-D; lower is better).

    Kernel ``exp(-||x - y||^2 / (2 s))`` with ``s`` the mean squared distance between
    pairs of real rows (Torfi et al.'s code); biased estimator; returns ``sqrt(max(MMD^2, 0))``.
    Each table is subsampled to ``max_samples`` rows.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.metrics import maximum_mean_discrepancy
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=(300, 2)), rng.normal(size=(300, 2))
    >>> maximum_mean_discrepancy(a, b) < maximum_mean_discrepancy(a, b + 2.0)
    True
    """
    R, S, _ = numeric_view(X_real, X_syn)
    rng = np.random.default_rng(random_state)
    if len(R) > max_samples:
        R = R[rng.choice(len(R), max_samples, replace=False)]
    if len(S) > max_samples:
        S = S[rng.choice(len(S), max_samples, replace=False)]

    def sq(A, B):
        d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
        return np.maximum(d, 0.0)

    s = float(sq(R, R).mean())
    if s <= 0:
        s = 1.0
    kxx = np.exp(-sq(R, R) / (2 * s)).mean()
    kyy = np.exp(-sq(S, S) / (2 * s)).mean()
    kxy = np.exp(-sq(R, S) / (2 * s)).mean()
    return float(math.sqrt(max(kxx + kyy - 2 * kxy, 0.0)))


def _binned(R, S, bins):
    """Integer bin codes per column: distinct values if few, else equal-width bins."""
    cr = np.empty(R.shape, dtype=np.int64)
    cs = np.empty(S.shape, dtype=np.int64)
    nb = []
    for j in range(R.shape[1]):
        vals = np.unique(np.concatenate([R[:, j], S[:, j]]))
        if vals.size <= bins:
            cr[:, j] = np.searchsorted(vals, R[:, j])
            cs[:, j] = np.searchsorted(vals, S[:, j])
            nb.append(vals.size)
        else:
            lo, hi = vals[0], vals[-1]
            edges = np.linspace(lo, hi, bins + 1)[1:-1]
            cr[:, j] = np.searchsorted(edges, R[:, j], side="right")
            cs[:, j] = np.searchsorted(edges, S[:, j], side="right")
            nb.append(bins)
    return cr, cs, nb


def marginal_total_variation(X_real, X_syn, *, way=1, bins=10, max_pairs=None, random_state=0):
    """Mean total-variation distance between the 1- or 2-way marginals of the tables.

    Numeric columns with more than ``bins`` distinct values (over both tables) are cut into
    ``bins`` equal-width bins over their joint range; other columns use their values.
    ``TV = ½ Σ |p_real − p_syn|`` over the cells of each marginal, averaged over columns
    (``way=1``) or pairs of columns (``way=2``). 0 = identical, 1 = disjoint.

    Parameters
    ----------
    way : {1, 2}, default=1
    bins : int, default=10
    max_pairs : int, optional
        With ``way=2``, average over that many random pairs (all pairs by default).
    random_state : int, default=0

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.metrics import marginal_total_variation
    >>> marginal_total_variation(np.zeros((5, 2)), np.ones((5, 2)))
    1.0
    """
    if way not in (1, 2):
        raise ValueError(f"way must be 1 or 2, got {way!r}")
    if isinstance(bins, bool) or not isinstance(bins, Integral) or bins < 2:
        raise ValueError("bins must be an integer >= 2")
    R, S, _ = numeric_view(X_real, X_syn)
    cr, cs, nb = _binned(R, S, int(bins))
    p = R.shape[1]
    if way == 1:
        groups = [(j,) for j in range(p)]
    else:
        groups = list(itertools.combinations(range(p), 2))
        if not groups:
            raise ValueError("way=2 needs at least 2 columns")
        if max_pairs is not None and len(groups) > max_pairs:
            rng = np.random.default_rng(random_state)
            idx = rng.choice(len(groups), int(max_pairs), replace=False)
            groups = [groups[i] for i in sorted(idx)]
    tvs = []
    for g in groups:
        size = int(np.prod([nb[j] for j in g]))
        kr = np.ravel_multi_index(tuple(cr[:, j] for j in g), [nb[j] for j in g])
        ks = np.ravel_multi_index(tuple(cs[:, j] for j in g), [nb[j] for j in g])
        hr = np.bincount(kr, minlength=size) / len(kr)
        hs = np.bincount(ks, minlength=size) / len(ks)
        tvs.append(0.5 * np.abs(hr - hs).sum())
    return float(np.mean(tvs))


def tstr_score(
    estimator, X_syn, y_syn, X_test, y_test, *, scoring="roc_auc", X_train=None, y_train=None
):
    """Train on synthetic, test on real (Beaulieu-Jones et al. 2019; Torfi et al. 2022).

    ``estimator`` (any scikit-learn estimator; cloned) is fitted on ``(X_syn, y_syn)`` and
    scored on the real ``(X_test, y_test)`` with the scorer named ``scoring``
    (:func:`sklearn.metrics.get_scorer`). With ``X_train``/``y_train`` the TRTR baseline
    (train on real) is returned too. A classifier whose synthetic labels hold one class
    only is replaced by a constant prediction of that class (AUC 0.5).

    Returns
    -------
    float, or dict ``{"tstr": float, "trtr": float}`` when the real training data are given

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdp.metrics import tstr_score
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2)); y = (X[:, 0] > 0).astype(int)
    >>> tstr_score(LogisticRegression(), X[:200], y[:200], X[200:], y[200:]) > 0.9
    True
    """
    from sklearn.base import clone, is_classifier
    from sklearn.dummy import DummyClassifier
    from sklearn.metrics import get_scorer

    scorer = get_scorer(scoring)

    def one(X, y):
        y = np.asarray(y)
        if is_classifier(estimator) and len(np.unique(y)) < 2:
            est = DummyClassifier(strategy="constant", constant=y[0])
            est.fit(np.zeros((1, 1)), y[:1])
            est.classes_ = np.unique(np.concatenate([y[:1], np.asarray(y_test)]))
            X_eval = np.zeros((len(y_test), 1))
            return _constant_score(scoring, y[0], np.asarray(y_test), est, X_eval, scorer)
        est = clone(estimator).fit(X, y)
        return float(scorer(est, X_test, y_test))

    tstr = one(X_syn, y_syn)
    if X_train is None:
        return tstr
    return {"tstr": tstr, "trtr": one(X_train, y_train)}


def _constant_score(scoring, label, y_test, est, X_eval, scorer):
    if scoring in ("roc_auc", "average_precision"):
        if scoring == "roc_auc":
            return 0.5
        return float(np.mean(y_test == np.max(y_test)))  # AP of a constant score
    from sklearn.metrics import accuracy_score

    if scoring == "accuracy":
        return float(accuracy_score(y_test, np.full(len(y_test), label)))
    return float(scorer(est, X_eval, y_test))

"""Attribute-inference attacks on released models and data (Lantz 2016, §5.3).

* :class:`ModelInversionAttack` -- maximised response likelihood against a released
  linear model ``y = c.x + d + r``, ``r ~ N(0, RSE^2)`` (eqs. 5.1--5.4): the adversary
  knows the target's response and some background attributes, and the marginal
  distributions of the rest; the unknown attributes' contribution is a convolution of
  discrete distributions, the residual a Gaussian.
* :class:`DeidentifiedDataAttack` -- Algorithm 1 (§5.3.2): match released rows (raw,
  de-identified or DP-synthetic) on the background and read off the target's
  distribution among the matches.

Both are post-processing of a release: they measure what a release lets an adversary
infer (accuracy and multi-class AUC against the truth, Lantz 2016 §5.3.2), they spend
no budget.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["DeidentifiedDataAttack", "ModelInversionAttack", "attribute_inference_scores"]


def _discrete(prior):
    values, probs = prior
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    probs = np.asarray(probs, dtype=float).ravel()
    if len(probs) != len(values) or np.any(probs < 0) or not probs.sum() > 0:
        raise ValueError("each prior is (values, probs) with non-negative probs of equal length")
    return values, probs / probs.sum()


def _convolve(dists, decimals=12):
    """Distribution of a sum of independent discrete variables: (support, probs)."""
    support, probs = np.array([0.0]), np.array([1.0])
    for vals, p in dists:
        s = (support[:, None] + vals[None, :]).ravel()
        q = (probs[:, None] * p[None, :]).ravel()
        keys, inv = np.unique(np.round(s, decimals), return_inverse=True)
        support = keys
        probs = np.bincount(inv.ravel(), weights=q, minlength=len(keys))
    return support, probs


class ModelInversionAttack:
    """Infer a target attribute from a released linear model's prediction of a known response.

    For each candidate value ``v`` of the target variable,
    ``P(v) = sum_s P(S = s) N(y - d - c_V x_V(v) - s; 0, RSE^2)`` where ``S`` is the
    contribution of the unknown variables (convolution of their priors scaled by their
    coefficients) and ``V`` the known background plus the target. Unweighted (maximum
    likelihood) by default; ``weight_by_prior=True`` multiplies by the target's prior
    (MAP), which the thesis found lowers the AUC.

    Parameters
    ----------
    coef : array-like of shape (n_columns,)
        Released coefficients ``c`` (in the model's input space).
    intercept : float
        Released intercept ``d``.
    residual_std : float
        Residual standard error of the model, in response units (the adversary's
        "performance information").
    priors : list of (values, probs)
        One entry per *variable*, in column order. ``values`` has shape ``(k,)`` for a
        one-column variable or ``(k, width)`` for a variable spanning ``width``
        columns (e.g. a nominal variable's dummy columns); ``probs`` are its marginal
        probabilities. Numeric variables are discretised by the adversary.
    target : int
        Index (into ``priors``) of the variable to infer.
    known : sequence of int
        Indices of the variables the adversary knows (the background).
    weight_by_prior : bool, default=False
    input_transform : (scale, shift), optional
        Affine map from raw columns to the model's inputs, ``x_model = x * scale +
        shift`` (per column), e.g. the scaling a DP model was trained with (§5.4.2).
    output_inverse_transform : (scale, shift), optional
        Affine map from model outputs to raw response units, ``y = y_model * scale +
        shift``.

    Attributes
    ----------
    classes_ : ndarray of shape (k_target, width)
        Candidate values of the target (rows of its prior's ``values``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.auditing import ModelInversionAttack
    >>> priors = [([0, 1], [0.5, 0.5]), ([0, 1], [0.7, 0.3])]
    >>> att = ModelInversionAttack(coef=[1.0, 2.0], intercept=0.0, residual_std=0.01,
    ...                            priors=priors, target=1, known=[0])
    >>> att.predict(np.array([[1.0], [0.0]]), y=np.array([3.0, 0.0])).ravel().tolist()
    [1.0, 0.0]
    """

    def __init__(
        self,
        coef,
        intercept,
        residual_std,
        priors,
        target,
        known,
        *,
        weight_by_prior=False,
        input_transform=None,
        output_inverse_transform=None,
    ):
        self.coef = coef
        self.intercept = intercept
        self.residual_std = residual_std
        self.priors = priors
        self.target = target
        self.known = known
        self.weight_by_prior = weight_by_prior
        self.input_transform = input_transform
        self.output_inverse_transform = output_inverse_transform
        self._prepare()

    def _prepare(self):
        dists = [_discrete(p) for p in self.priors]
        widths = [v.shape[1] for v, _ in dists]
        offsets = np.concatenate([[0], np.cumsum(widths)])
        coef = np.asarray(self.coef, dtype=float).ravel()
        if len(coef) != offsets[-1]:
            raise ValueError(
                f"coef has {len(coef)} entries but the priors span {offsets[-1]} columns"
            )
        intercept = float(self.intercept)
        if self.input_transform is not None:
            scale, shift = (
                np.broadcast_to(np.asarray(a, float), coef.shape) for a in self.input_transform
            )
            intercept = intercept + float(coef @ shift)
            coef = coef * scale
        out_scale, out_shift = (1.0, 0.0)
        if self.output_inverse_transform is not None:
            out_scale, out_shift = (float(a) for a in self.output_inverse_transform)
        # work in raw response units: y = out_scale * (c.x + d) + out_shift + r
        coef, intercept = coef * out_scale, intercept * out_scale + out_shift
        if not float(self.residual_std) > 0:
            raise ValueError("residual_std must be > 0")
        n_var = len(dists)
        target = int(self.target)
        known = [int(k) for k in self.known]
        if not 0 <= target < n_var or target in known or any(not 0 <= k < n_var for k in known):
            raise ValueError("target and known must be distinct variable indices")
        cols = [np.arange(offsets[i], offsets[i + 1]) for i in range(n_var)]
        unknown = [i for i in range(n_var) if i != target and i not in known]
        self._unknown_support, self._unknown_probs = _convolve(
            [(vals @ coef[cols[i]], p) for i, (vals, p) in enumerate(dists) if i in unknown]
        )
        self._known_cols = np.concatenate([cols[k] for k in known]) if known else np.array([], int)
        self._coef, self._intercept = coef, intercept
        self.classes_, self._target_prior = dists[target]
        self._target_contrib = self.classes_ @ coef[cols[target]]

    def predict_proba(self, X_known, y):
        """Normalised candidate scores ``P(v)`` per row: shape ``(n, k_target)``.

        ``X_known`` holds the known variables' columns (in the order of ``known``),
        ``y`` the targets' responses in raw units.
        """
        X_known = np.asarray(X_known, dtype=float).reshape(len(y), -1)
        if X_known.shape[1] != len(self._known_cols):
            raise ValueError(f"X_known must have {len(self._known_cols)} columns")
        y = np.asarray(y, dtype=float).ravel()
        rest = y - self._intercept - X_known @ self._coef[self._known_cols]
        resid = rest[:, None, None] - self._target_contrib[None, :, None] - self._unknown_support
        logp = stats.norm.logpdf(resid, scale=float(self.residual_std))
        logp = logp + np.log(np.maximum(self._unknown_probs, 1e-300))
        score = np.logaddexp.reduce(logp, axis=2)
        if self.weight_by_prior:
            score = score + np.log(np.maximum(self._target_prior, 1e-300))
        score = score - score.max(axis=1, keepdims=True)
        p = np.exp(score)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, X_known, y):
        """The most likely candidate value per row, shape ``(n, width)``."""
        return self.classes_[np.argmax(self.predict_proba(X_known, y), axis=1)]


def _as_frame(data):
    import pandas as pd

    return (
        data.reset_index(drop=True)
        if isinstance(data, pd.DataFrame)
        else pd.DataFrame(np.asarray(data))
    )


class DeidentifiedDataAttack:
    """Algorithm 1 of Lantz (2016, §5.3.2): attribute inference from released rows.

    For each query row, the released rows that match its background are found; the
    predicted distribution of each target column is its distribution among them (the
    released data's marginal when nothing matches; the prediction is then the mode).

    Parameters
    ----------
    released_data : DataFrame or 2-D array
        The release (raw, de-identified, or DP synthetic rows, e.g. from
        ``DPHistogramSynthesizer.sample()``).
    background_cols : sequence of column labels (or indices for arrays)
        Columns the adversary knows (include the response if it is known).
    target_cols : sequence of column labels (or indices)
    snap_numeric : bool, default=True
        Snap each numeric background value of a query to the nearest value present in
        that released column (the bin representatives of a histogram release) before
        matching.

    Attributes
    ----------
    classes_ : list of ndarray
        Sorted values of each target column in the release.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.auditing import DeidentifiedDataAttack
    >>> released = np.array([[0.0, 1, 0], [0.0, 1, 0], [1.0, 0, 1]])
    >>> att = DeidentifiedDataAttack(released, background_cols=[0], target_cols=[1, 2])
    >>> att.predict(np.array([[0.1], [0.9]])).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    def __init__(self, released_data, background_cols, target_cols, *, snap_numeric=True):
        self.released_data = released_data
        self.background_cols = background_cols
        self.target_cols = target_cols
        self.snap_numeric = snap_numeric
        data = _as_frame(released_data)
        self._bg = data[list(background_cols)]
        self._targets = data[list(target_cols)]
        self.classes_ = [np.unique(self._targets[c].to_numpy()) for c in self._targets.columns]

    def _snap(self, queries):
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        q = queries.copy()
        if not self.snap_numeric:
            return q
        for c in q.columns:
            col = self._bg[c]
            if is_numeric_dtype(col.dtype) and not is_bool_dtype(col.dtype) and len(col):
                reps = np.unique(col.to_numpy(dtype=float))
                vals = q[c].to_numpy(dtype=float)
                q[c] = reps[np.argmin(np.abs(vals[:, None] - reps[None, :]), axis=1)]
        return q

    def _matches(self, queries):
        q = self._snap(_as_frame(queries))
        q.columns = self._bg.columns
        bg = self._bg.to_numpy()
        return [np.all(bg == row, axis=1) for row in q.to_numpy()]

    def predict_proba(self, background):
        """List (one per target column) of arrays ``(n_queries, n_classes)``."""
        masks = self._matches(background)
        out = []
        for j, c in enumerate(self._targets.columns):
            col = self._targets[c].to_numpy()
            classes = self.classes_[j]
            marginal = np.array([np.mean(col == v) for v in classes]) if len(col) else None
            rows = []
            for m in masks:
                if m.any():
                    rows.append([np.mean(col[m] == v) for v in classes])
                else:
                    rows.append(marginal)
            out.append(np.asarray(rows, dtype=float).reshape(len(masks), len(classes)))
        return out

    def predict(self, background):
        """Most frequent matched value per target column: shape ``(n_queries, n_targets)``."""
        probas = self.predict_proba(background)
        return np.column_stack(
            [self.classes_[j][np.argmax(p, axis=1)] for j, p in enumerate(probas)]
        )


def attribute_inference_scores(y_true, proba, classes):
    """Accuracy and multi-class AUC (Hand & Till, "ovo" macro) of an attribute attack.

    The measures of Lantz (2016, §5.3.2). AUC is ``nan`` when fewer than two classes occur in
    ``y_true``.

    Returns
    -------
    dict with ``accuracy``, ``auc`` and ``baseline_accuracy`` (always guessing the
    most frequent true value).
    """
    from sklearn.metrics import roc_auc_score

    y_true = np.asarray(y_true).ravel()
    classes = np.asarray(classes).ravel()
    proba = np.asarray(proba, dtype=float)
    pred = classes[np.argmax(proba, axis=1)]
    present = np.isin(classes, y_true)
    auc = float("nan")
    if present.sum() >= 2:
        sub = proba[:, present]
        sub = sub / np.maximum(sub.sum(1, keepdims=True), 1e-300)
        keep = np.isin(y_true, classes[present])
        if present.sum() == 2:
            auc = float(roc_auc_score(y_true[keep] == classes[present][1], sub[keep, 1]))
        else:
            auc = float(
                roc_auc_score(
                    y_true[keep],
                    sub[keep],
                    multi_class="ovo",
                    average="macro",
                    labels=classes[present],
                )
            )
    _, counts = np.unique(y_true, return_counts=True)
    return {
        "accuracy": float(np.mean(pred == y_true)),
        "auc": auc,
        "baseline_accuracy": float(counts.max() / len(y_true)),
    }

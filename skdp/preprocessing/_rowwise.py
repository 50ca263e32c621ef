"""A function applied row by row, declared so by the user: no privacy cost."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.preprocessing import FunctionTransformer

from skdp.base import DPEstimatorMixin
from skdp.exceptions import PrivacyLeakWarning
from skdp.preprocessing._common import DOCS
from skdp.utils._docstrings import insert_docs
from skdp.utils._sklearn_compat import check_is_fitted
from skdp.utils.validation import validate_data

__all__ = ["RowwiseFunctionTransformer"]


@insert_docs
class RowwiseFunctionTransformer(DPEstimatorMixin, FunctionTransformer):
    """A :class:`~sklearn.preprocessing.FunctionTransformer` whose function the user
    declares to act on each row alone; no privacy cost.

    scikit-learn's ``FunctionTransformer`` is stateless, but its ``func`` receives the
    whole batch and may compute a statistic of it: ``lambda A: A - A.mean(0)`` centres
    every row by the private mean, with no noise, in ``fit_transform`` and again in every
    ``transform``. skdp cannot tell such a function from a row-wise one by looking at it,
    so :func:`skdp.pipeline.check_pipeline_privacy` (and so
    :class:`~skdp.pipeline.DPPipeline` and :class:`~skdp.model_selection.DPGridSearchCV`)
    treats a plain ``FunctionTransformer`` as a step that learns without a guarantee.
    Wrapping the function in this class is the declaration that it is row-wise: each
    output row depends on its own input row (and on constants) only, e.g. ``np.log1p``,
    a unit conversion, a clinical score computed from one record's columns. The
    declaration is yours; skdp does not verify it (a check would itself have to read the
    rows).

    Parameters
    ----------
    func : callable or None, default=None
        Maps an array (or DataFrame) of rows to the transformed rows, one output row per
        input row, each computed from its own input row only. ``None`` is the identity.
    inverse_func : callable or None, default=None
        The inverse map, also row-wise.
    validate : bool, default=False
        As in scikit-learn: convert ``X`` to a numpy array first.
    accept_sparse : bool, default=False
        As in scikit-learn.
    check_inverse : bool, default=False
        As in scikit-learn, but off by default here: with both functions set, ``fit`` then
        runs them on the rows and warns on the result, a message that depends on the
        private rows, so ``check_inverse=True`` makes the fit non-private
        (``epsilon_spent_ = inf``, ``privacy_guarantee_ = "none"``).
    feature_names_out : callable, "one-to-one" or None, default=None
        As in scikit-learn.
    kw_args, inv_kw_args : dict or None, default=None
        Extra keyword arguments of ``func`` and ``inverse_func``. They must be public
        constants, not statistics of the private rows.

    Attributes
    ----------
    epsilon_spent_, delta_spent_ : float
        0 (``inf`` with ``check_inverse=True`` and both functions set).
    privacy_guarantee_ : str
        ``"exact"`` (``"none"`` with the non-private option above).
    nonprivate_options_ : list of str
    {attr_features_in}

    See Also
    --------
    sklearn.preprocessing.FunctionTransformer : The same, without the declaration.
    skdp.preprocessing.PublicBoundsScaler : Scaling from declared bounds.

    Notes
    -----
    **Privacy.** Neighbouring relation: add or remove one row, ``n`` public
    (:ref:`neighbouring-relation`). ``fit`` stores nothing from the rows (their number of
    columns and column names only), so neighbouring data sets give the identical fitted
    transformer: the release is 0-DP, sensitivity 0, no mechanism, an exact guarantee
    -- *given* that ``func`` is row-wise, which the user declares by choosing this class.
    ``transform`` maps each record on its own; its output is a function of one record,
    as any later skdp estimator expects of its input.

    **Floating point.** Nothing is random and no statistic is released.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import RowwiseFunctionTransformer
    >>> from skdp.pipeline import check_pipeline_privacy
    >>> log = RowwiseFunctionTransformer(func=np.log1p, feature_names_out="one-to-one")
    >>> check_pipeline_privacy(log).epsilon
    0.0
    >>> log.fit_transform(np.array([[0.0], [np.e - 1]]))
    array([[0.],
           [1.]])
    >>> log.epsilon_spent_, log.privacy_guarantee_
    (0.0, 'exact')
    """

    #: Learns nothing from the rows (read by skdp.pipeline); the row-wise declaration is
    #: the choice of this class.
    _skdp_public_transform = True

    _parameter_constraints: dict = dict(FunctionTransformer._parameter_constraints)

    def __init__(
        self,
        *,
        func=None,
        inverse_func=None,
        validate=False,
        accept_sparse=False,
        check_inverse=False,
        feature_names_out=None,
        kw_args=None,
        inv_kw_args=None,
    ):
        super().__init__(
            func=func,
            inverse_func=inverse_func,
            validate=validate,
            accept_sparse=accept_sparse,
            check_inverse=check_inverse,
            feature_names_out=feature_names_out,
            kw_args=kw_args,
            inv_kw_args=inv_kw_args,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = bool(self.accept_sparse)  # the input is always checked
        tags.input_tags.allow_nan = False
        return tags

    def _extra_nonprivate_options(self):
        checks = self.check_inverse and self.func is not None and self.inverse_func is not None
        return ["check_inverse"] if checks else []

    @insert_docs(**DOCS)
    def fit(self, X, y=None):
        """Check the input (no value of ``X`` is stored) and record a zero spend.

        {transform_param_X}
        y : None
            Ignored.

        Returns
        -------
        self
        """
        if self._extra_nonprivate_options():
            warnings.warn(
                "RowwiseFunctionTransformer(check_inverse=True) runs func and inverse_func "
                "on the private rows at fit and warns on the result: the fit is not "
                "private (epsilon_spent_=inf). Set check_inverse=False.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
        validate_data(self, X, dtype=np.float64, accept_sparse=self.accept_sparse, reset=True)
        super().fit(X, y)
        self._record_privacy_spent(0.0, 0.0, guarantee="exact")
        return self

    @insert_docs(**DOCS)
    def transform(self, X):
        """Apply ``func`` to the rows of ``X``.

        {transform_param_X}
            Numeric and finite (impute missing values first, e.g. with
            :class:`~skdp.preprocessing.DPSimpleImputer`).

        Returns
        -------
        ndarray or DataFrame
            ``func(X)``; an error if it is not finite.
        """
        check_is_fitted(self)
        validate_data(self, X, dtype=np.float64, accept_sparse=self.accept_sparse, reset=False)
        return _finite(super().transform(X), "func")

    def inverse_transform(self, X):
        """Apply ``inverse_func`` to the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_output_features)

        Returns
        -------
        ndarray or DataFrame
        """
        check_is_fitted(self)
        return _finite(super().inverse_transform(X), "inverse_func")


def _finite(out, name):
    """``out``, or a ValueError if a numeric output holds NaN or infinity (no value shown)."""
    values = np.asarray(out.to_numpy() if hasattr(out, "to_numpy") else out)
    if values.dtype.kind in "fc" and not np.isfinite(values).all():
        raise ValueError(
            f"RowwiseFunctionTransformer: {name} returned NaN or infinity for some rows; "
            "keep its inputs inside its domain (e.g. clip or shift before a log)"
        )
    return out

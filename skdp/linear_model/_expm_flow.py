"""ExpMFlowRegressor / ExpMFlowClassifier: the exponential mechanism over the parameters of a
bounded-output linear model, sampled by a normalizing flow (ExpM+NF; Bridges et al. 2023).

This module itself does not import torch: the torch work (target, flow, reverse-KL training)
lives in the layer-3 engine :mod:`skdp.variational`, which is imported here (so importing this
module imports torch), and ``skdp.linear_model`` exposes these estimators lazily.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets

from skdp.exceptions import PrivacyLeakWarning
from skdp.linear_model._expm_flow_base import (
    _COMMON_ATTRS_DOC,
    _COMMON_PARAMS_DOC,
    _PRIVACY_NOTES,
    _STREAMS,
    _BaseExpMFlow,
    _sigmoid,
    expm_flow_init,
)
from skdp.linear_model._expm_flow_plan import ExpMFlowPlan
from skdp.mechanisms import resolve_bounds
from skdp.utils._deprecation import RenamedAttribute
from skdp.utils._docstrings import insert_docs
from skdp.utils._groups import bound_contributions, patient_codes
from skdp.utils._random import fit_streams
from skdp.utils._sklearn_compat import StrOptions, _fit_context, validate_data

__all__ = ["ExpMFlowClassifier", "ExpMFlowRegressor"]


@insert_docs  # the {attr_patient_facts} of _COMMON_ATTRS_DOC
class ExpMFlowClassifier(ClassifierMixin, _BaseExpMFlow):
    __doc__ = f"""Binary logistic model released by the flow-sampled exponential mechanism.

    One parameter vector ``theta = (coef_, intercept_)`` is sampled (approximately) from
    ``p(theta) ∝ exp(-epsilon (sum_i (sigmoid(x_i^T w + b) - y_i)^2 + alpha r(theta)))``
    by a normalizing flow trained by reverse KL (Bridges, Tombs and Stanley; the paper's
    use: binary classification scored by AUC). ``predict_proba`` is ``sigmoid(X coef_ +
    intercept_)``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Nominal total privacy loss of one ``fit`` (all released models together).
        ``math.inf`` releases the mode (non-private).
    classes : None, "data" or array-like of 2 labels, default=None
        The public label set ``[negative, positive]`` (``y`` may hold either or both).
        It must be declared: ``None`` raises ``ValueError`` at ``fit``, because which
        labels occur in ``y`` is a fact about the private rows. ``"data"`` is the explicit
        opt-in that reads the two labels off ``y`` (as scikit-learn classifiers do; ``y``
        must then hold exactly two labels): it emits
        :class:`~skdp.exceptions.PrivacyLeakWarning` and the fit is recorded as
        non-private (``epsilon_spent_ = inf``).
{_COMMON_PARAMS_DOC}

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
{_COMMON_ATTRS_DOC}

    See Also
    --------
    ExpMFlowRegressor : the same mechanism for a target with public bounds.

    Notes
    -----
{_PRIVACY_NOTES}

    References
    ----------
    .. [1] R. A. Bridges, V. J. Tombs, C. B. Stanley, "Are Normalizing Flows the Key to Unlocking
       the Exponential Mechanism?" (2023).
    .. [2] F. McSherry, K. Talwar, "Mechanism Design via Differential Privacy", FOCS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model import ExpMFlowClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = (X[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(int)
    >>> clf = ExpMFlowClassifier(epsilon=5.0, classes=[0, 1], n_iter=100, dtype="float64",
    ...                          device="cpu", random_state=0)
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clf = clf.fit(X, y)
    >>> clf.predict_proba(X).shape, clf.privacy_guarantee_
    ((200, 2), 'approximate')
    """

    _parameter_constraints: dict = {
        **_BaseExpMFlow._parameter_constraints,
        "classes": [None, StrOptions({"data"}), "array-like"],
    }

    __init__ = expm_flow_init("ExpMFlowClassifier", "classes")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, groups=None):
        """Sample the released model(s).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite features (no bounds needed; scale them with public constants).
        y : array-like of shape (n_samples,)
            Labels among the declared ``classes`` (with ``classes="data"``: exactly two
            labels).
        groups : array-like of shape (n_samples,), default=None
            The patient of each row (as in scikit-learn's ``GroupKFold``): with it the
            (approximate) guarantee is per patient, each keeping at most
            ``max_rows_per_group`` rows chosen at random (Notes).

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        codes, k = patient_codes(self, groups, X.shape[0])
        epsilon, _ = self._check_privacy_params()
        check_classification_targets(y)
        if self.classes is None:
            # The label set is public metadata (:doc:`privacy_guarantees`): reading it
            # off y would release which labels occur in the private rows.
            raise ValueError(
                "ExpMFlowClassifier needs the public label set: pass "
                "classes=[negative, positive] (or classes='data' to read the two classes "
                "off y, which is not private)"
            )
        if isinstance(self.classes, str):  # "data": the explicit, non-private opt-in
            warnings.warn(
                "classes='data' reads the label set off y: it is released without "
                "differential privacy and the fit is recorded as non-private. Declare "
                "classes=[negative, positive] instead.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
            classes = np.unique(y)
            if classes.shape[0] != 2:
                # one fixed message whatever the number of labels (no count is printed)
                raise ValueError(
                    "Only binary classification is supported. With classes='data', y must "
                    "hold exactly two classes (not one class, not three or more); pass "
                    "classes=[negative, positive] to declare them"
                )
        else:
            classes = np.asarray(self.classes)
            if classes.ndim != 1 or classes.shape[0] != 2 or classes[0] == classes[1]:
                raise ValueError("classes must hold exactly two distinct labels")
            if not np.isin(y, classes).all():
                raise ValueError("y contains labels that are not in classes")
        self.classes_ = classes
        streams = fit_streams(self.random_state, _STREAMS, estimator=self, X=X, y=y, groups=codes)
        if codes is not None:  # at most k rows per patient, chosen at random
            keep = bound_contributions(codes, k, streams["groups"])
            X, y = X[keep], y[keep]
        y01 = (y == classes[1]).astype(np.float64)
        plan = ExpMFlowPlan.build(
            epsilon=epsilon, n_release_samples=self.n_release_samples, max_rows_per_group=k
        )
        self._fit_expm(X, y01, plan, streams)
        self._record(plan)
        return self

    def decision_function(self, X):
        """``X @ coef_ + intercept_`` (logit of the positive class)."""
        return self._decision(X)

    def predict_proba(self, X):
        """``[1 - p, p]`` with ``p = sigmoid(X @ coef_ + intercept_)``."""
        p = _sigmoid(self._decision(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """The class with the larger probability (ties go to the negative class)."""
        positive = self._decision(X) > 0
        return self.classes_[positive.astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


@insert_docs  # the {attr_patient_facts} of _COMMON_ATTRS_DOC
class ExpMFlowRegressor(RegressorMixin, _BaseExpMFlow):
    __doc__ = f"""Bounded-output linear regression released by the flow-sampled ExpM.

    Model ``y_hat = lo + (hi - lo) * sigmoid(x^T w + b)`` with public target bounds
    ``bounds_y = (lo, hi)``; targets are clipped to them (silently) and the squared loss is
    taken in ``[0, 1]``-scaled units, so each row's loss lies in ``[0, 1]`` (``s = 1``;
    ``(hi - lo)^2`` in the target's units). One parameter vector is sampled (approximately)
    from ``exp(-epsilon (sum_i l_i + alpha r(theta)))`` by a normalizing flow trained by
    reverse KL.

    Parameters
    ----------
    epsilon : float, default=1.0
        Nominal total privacy loss of one ``fit``, including a private bound estimate.
        ``math.inf`` releases the mode (non-private).
    bounds_y : None, "private", "data" or (lo, hi), default=None
        Public bounds of the target. ``None``: a private estimate spending 10 % of
        ``epsilon`` (:func:`skdp.mechanisms.resolve_bounds`, pure DP, exact) where public
        ``n`` and ``epsilon`` make it reliable; otherwise ``fit`` refuses with a
        ``ValueError`` that says what to declare (:doc:`/choosing_bounds`).
        ``"private"``: the explicit opt-in to that estimate even where it cannot be
        reliable (:class:`~skdp.exceptions.BoundsEstimateWarning`). ``"data"``: the
        non-private opt-in (:class:`~skdp.exceptions.PrivacyLeakWarning`).
{_COMMON_PARAMS_DOC}

    Attributes
    ----------
    bounds_y_ : tuple of float
        The ``(lo, hi)`` of ``bounds_y`` used (``bounds_`` is its deprecated name,
        removed in 0.2).
{_COMMON_ATTRS_DOC}

    See Also
    --------
    ExpMFlowClassifier : the paper's binary-classification use.

    Notes
    -----
{_PRIVACY_NOTES}

    With ``bounds_y=None`` the private bound estimate (Laplace-based, exact pure DP) spends
    ``0.1 * epsilon`` and the mechanism the rest (basic composition).

    References
    ----------
    .. [1] R. A. Bridges, V. J. Tombs, C. B. Stanley, "Are Normalizing Flows the Key to Unlocking
       the Exponential Mechanism?" (2023).

    Examples
    --------
    >>> import numpy as np, warnings
    >>> from skdp.linear_model import ExpMFlowRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = np.clip(0.5 + 0.2 * X[:, 0], 0, 1)
    >>> reg = ExpMFlowRegressor(epsilon=5.0, bounds_y=(0.0, 1.0), n_iter=100,
    ...                         dtype="float64", device="cpu", random_state=0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     reg = reg.fit(X, y)
    >>> bool(np.all((reg.predict(X) >= 0) & (reg.predict(X) <= 1)))
    True
    """

    _parameter_constraints: dict = {
        **_BaseExpMFlow._parameter_constraints,
        "bounds_y": [None, StrOptions({"data", "private"}), tuple, list, np.ndarray],
    }

    # deprecated name of bounds_y_ (removed in 0.2)
    bounds_ = RenamedAttribute("bounds_y_")

    __init__ = expm_flow_init("ExpMFlowRegressor", "bounds_y")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, groups=None):
        """Sample the released model(s).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        groups : array-like of shape (n_samples,), default=None
            The patient of each row (as in scikit-learn's ``GroupKFold``): with it the
            (approximate) guarantee is per patient, each keeping at most
            ``max_rows_per_group`` rows chosen at random (Notes); ``bounds_y`` must be
            declared.

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        codes, k = patient_codes(self, groups, X.shape[0], estimated=("bounds_y",))
        epsilon, _ = self._check_privacy_params()
        streams = fit_streams(self.random_state, _STREAMS, estimator=self, X=X, y=y, groups=codes)
        if codes is not None:  # at most k rows per patient, chosen at random
            keep = bound_contributions(codes, k, streams["groups"])
            X, y = X[keep], y[keep]
        bounds = self.bounds_y
        if isinstance(bounds, (tuple, list, np.ndarray)):
            if np.ndim(bounds) != 1 or len(bounds) != 2:
                raise ValueError("bounds_y must be a (lo, hi) pair")
        lo, hi, _ = resolve_bounds(  # the spend is the plan's eps_bounds
            bounds, y, epsilon=epsilon, rng=streams["bounds"], name="bounds_y"
        )
        lo, hi = float(np.ravel(lo)[0]), float(np.ravel(hi)[0])
        if not hi > lo:
            raise ValueError("bounds_y needs lo < hi")
        self.bounds_y_ = (lo, hi)
        y01 = (np.clip(y, lo, hi) - lo) / (hi - lo)
        plan = ExpMFlowPlan.build(
            epsilon=epsilon,
            n_release_samples=self.n_release_samples,
            regressor=True,
            bounds_estimated=bounds is None or (isinstance(bounds, str) and bounds == "private"),
            max_rows_per_group=k,
        )
        self._fit_expm(X, y01, plan, streams)
        self._record(plan)
        return self

    def predict(self, X):
        """``lo + (hi - lo) * sigmoid(X @ coef_ + intercept_)``, inside ``bounds_y_``."""
        lo, hi = vars(self).get("bounds_y_", (0.0, 1.0))
        return lo + (hi - lo) * _sigmoid(self._decision(X))

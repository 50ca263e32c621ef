"""A scikit-learn Pipeline that composes the privacy spend of its steps."""

from __future__ import annotations

import inspect
import warnings

from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.utils.metaestimators import available_if

from skdp.exceptions import PrivacyLeakWarning
from skdp.utils._meta_privacy import LEARNS, PRIVATE, check_pipeline_privacy
from skdp.utils._random import ScrubSeedsOnPickleMixin

__all__ = ["DPPipeline", "make_dp_pipeline"]


def _final_has(attr):
    def check(self):
        getattr(self._final_estimator, attr)  # the original AttributeError if absent
        return True

    return check


def _can_fit_transform(self):
    final = self._final_estimator
    return final == "passthrough" or hasattr(final, "transform") or hasattr(final, "fit_transform")


def _describe(steps):
    return "; ".join(f"step {s.name!r} ({s.estimator}): {s.reason}" for s in steps)


class DPPipeline(ScrubSeedsOnPickleMixin, Pipeline):
    """A :class:`~sklearn.pipeline.Pipeline` whose privacy spend is the sum of its steps'.

    Every step is fitted on the same rows, so the steps compose sequentially:
    ``epsilon_spent_`` is the sum of the steps' ``epsilon_spent_`` and ``delta_spent_``
    the sum of their ``delta_spent_``. A step that learns from the rows without a
    privacy guarantee (a scikit-learn scaler, imputer or classifier,
    ``OneHotEncoder(categories="auto")``, a skdp estimator with ``bounds="data"`` or
    ``epsilon=inf``...) is refused at ``fit`` with a ``ValueError`` naming it, unless
    ``allow_nonprivate=True``. The rule set is that of :func:`check_pipeline_privacy`,
    which also walks nested pipelines, ``ColumnTransformer`` and ``FeatureUnion``.

    Everything else is scikit-learn's ``Pipeline``: step access, ``set_params`` with
    ``step__param`` names, ``set_output``, metadata routing, caching with ``memory``.

    Parameters
    ----------
    steps : list of (str, estimator) tuples
        As in :class:`~sklearn.pipeline.Pipeline`.
    transform_input : list of str, default=None
        As in :class:`~sklearn.pipeline.Pipeline` (metadata routing only).
    memory : str or object with the joblib.Memory interface, default=None
        As in :class:`~sklearn.pipeline.Pipeline`.
    verbose : bool, default=False
        As in :class:`~sklearn.pipeline.Pipeline` (prints step names and fit times).
    allow_nonprivate : bool, default=False
        Fit a pipeline with a step that learns without a guarantee anyway: a
        :class:`~skdp.exceptions.PrivacyLeakWarning` names the steps, and the fitted
        pipeline reports ``epsilon_spent_ = inf`` and ``privacy_guarantee_ = "none"``
        (so :meth:`~skdp.accounting.PrivacyLedger.spend_fitted` refuses it unless the
        ledger's budget is infinite).

    Attributes
    ----------
    epsilon_spent_, delta_spent_ : float
        Sequential composition of the fitted steps' spend (``inf`` epsilon when a step
        learns without a guarantee). Add/remove one row, ``n`` public; per patient
        when ``fit`` got ``groups``.
    privacy_unit_ : {"row", "group"}
        What the total protects: one row, or one patient with all their rows
        (``groups``).
    privacy_guarantee_ : {"exact", "approximate", "none"}
        The weakest of the steps' guarantees (``"none" < "approximate" < "exact"``).
    privacy_report_ : PipelinePrivacyReport
        The per-step verdict (:func:`check_pipeline_privacy` of the fitted pipeline).
    nonprivate_options_ : list of str
        The names of the steps that learn without a guarantee (empty when private).
    named_steps, n_features_in_, feature_names_in_, classes_
        As in :class:`~sklearn.pipeline.Pipeline`.

    See Also
    --------
    make_dp_pipeline : Build a ``DPPipeline`` with automatic step names.
    check_pipeline_privacy : The same verdict for any estimator, fitted or not.

    Notes
    -----
    **Relation.** Every skdp step is differentially private under *add or remove one
    row* with ``n`` public (:ref:`neighbouring-relation`); so is the pipeline. A
    transformer's ``transform`` is a per-record function of its fitted (private) state,
    so the transformed data sets of two neighbours are again neighbours, and the next
    step's guarantee applies to them. With ``fit(X, y, groups=...)`` the relation is
    *add or remove one patient with all their rows*: ``groups`` goes to every step that
    learns privately (each bounds a patient's rows with its own ``max_rows_per_group``;
    :doc:`/patients`), transformers keep the rows aligned with ``groups``, and the
    total is per patient. A private step that does not support ``groups`` yet is
    refused, since the total would then protect rows only.

    **Accounting.** Basic sequential composition (Dwork and Roth 2014, Thm 3.16; it
    holds for adaptively chosen mechanisms): ``epsilon_spent_ = sum(epsilon_i)``,
    ``delta_spent_ = sum(delta_i)``; a step with ``epsilon_spent_ = inf`` makes the
    total ``inf``. Steps that learn nothing private (``"passthrough"``, stateless
    transformers, skdp's public-bounds transformers) spend 0. Tighter composition
    (RDP, zCDP) across steps is not attempted: the steps account with different tools.

    **Exact.** The total is a proven bound when every step's is;
    ``privacy_guarantee_`` is the weakest of the steps' guarantees, so one
    approximate step (e.g. :class:`~skdp.linear_model.ExpMFlowClassifier`) makes the
    pipeline's ``"approximate"``.

    **Floating point.** The pipeline draws no noise itself; each step's Notes say how
    its noise is drawn.

    References
    ----------
    .. [1] C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
       Found. Trends Theor. Comput. Sci. 9(3-4), 2014 (Thm 3.16: composition).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model import DPLinearRegression
    >>> from skdp.pipeline import DPPipeline
    >>> from skdp.preprocessing import DPStandardScaler
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, size=(500, 2))
    >>> y = X @ [0.5, -0.2] + rng.normal(0, 0.1, 500)
    >>> pipe = DPPipeline([
    ...     ("scale", DPStandardScaler(epsilon=0.5, bounds=(0, 10), random_state=0)),
    ...     ("model", DPLinearRegression(epsilon=1.0, bounds_X=(-3, 3), bounds_y=(-5, 5),
    ...                                  random_state=0)),
    ... ]).fit(X, y)
    >>> pipe.epsilon_spent_, pipe.privacy_guarantee_
    (1.5, 'exact')

    A scikit-learn scaler learns the mean and the variance from the rows without noise:

    >>> from sklearn.preprocessing import StandardScaler
    >>> DPPipeline([("scale", StandardScaler()), ("model", DPLinearRegression())]).fit(X, y)
    Traceback (most recent call last):
    ...
    ValueError: DPPipeline: step 'scale' (StandardScaler) learns from the rows ...
    """

    _parameter_constraints: dict = {
        **Pipeline._parameter_constraints,
        "allow_nonprivate": ["boolean"],
    }

    def __init__(
        self, steps, *, transform_input=None, memory=None, verbose=False, allow_nonprivate=False
    ):
        super().__init__(steps, transform_input=transform_input, memory=memory, verbose=verbose)
        self.allow_nonprivate = allow_nonprivate

    # ------------------------------------------------------------ the privacy checks
    def _check_privacy_before_fit(self):
        self._validate_params()
        report = check_pipeline_privacy(self)
        self._warn_or_refuse(report)

    def _warn_or_refuse(self, report):
        leaks = [s for s in report.steps if s.status == LEARNS]
        if not leaks:
            return
        what = _describe(leaks)
        if not self.allow_nonprivate:
            if len(leaks) == 1:
                s = leaks[0]
                head = (
                    f"step {s.name!r} ({s.estimator}) learns from the rows without a "
                    f"privacy guarantee ({s.reason})"
                )
            else:
                head = f"steps learn from the rows without a privacy guarantee: {what}"
            raise ValueError(
                f"DPPipeline: {head}. Replace {_it(leaks)} with a skdp private or "
                "public-metadata transformer (skdp.preprocessing), declare the metadata, "
                "or pass allow_nonprivate=True to fit anyway with epsilon_spent_=inf."
            )
        warnings.warn(
            f"DPPipeline(allow_nonprivate=True): {what}. The fitted pipeline reports "
            "epsilon_spent_=inf and privacy_guarantee_='none'.",
            PrivacyLeakWarning,
            stacklevel=3,
        )

    def _route_groups(self, params):
        """Send ``groups`` to every top-level step that learns privately; refuse a
        private step that cannot take it. Returns the step parameters and the unit."""
        if params.get("groups") is None:
            params.pop("groups", None)
            return params, "row"
        groups = params.pop("groups")
        top = dict(self.steps)
        for step in check_pipeline_privacy(self).steps:
            if step.status != PRIVATE:
                continue
            est = top.get(step.name)
            if est is None or "groups" not in inspect.signature(est.fit).parameters:
                raise ValueError(
                    f"DPPipeline: groups= but step {step.name!r} ({step.estimator}) does "
                    "not support patient-level privacy yet, so the pipeline's total would "
                    "protect rows, not patients. Use steps that take groups (doc/patients"
                    ".rst) or fit without groups."
                )
            params[f"{step.name}__groups"] = groups
        return params, "group"

    def _record_privacy(self, unit="row"):
        report = check_pipeline_privacy(self)
        leaks = [s for s in report.steps if s.status == LEARNS]
        if leaks and not self.allow_nonprivate:  # a step turned non-private during fit
            raise ValueError(
                f"DPPipeline: after fit, {_describe(leaks)}; pass allow_nonprivate=True "
                "to keep such a fit."
            )
        self.privacy_report_ = report
        self.privacy_unit_ = unit
        self.epsilon_spent_ = report.epsilon
        self.delta_spent_ = report.delta
        self.privacy_guarantee_ = report.privacy_guarantee or "exact"
        self.nonprivate_options_ = [s.name for s in leaks]
        return self

    # ------------------------------------------------------------ fitting
    def fit(self, X, y=None, **params):
        """Check the steps, fit the pipeline and record its privacy spend.

        Parameters
        ----------
        X : iterable
            Training data (the first step's input).
        y : iterable, default=None
            Training targets.
        **params : dict
            As in :meth:`sklearn.pipeline.Pipeline.fit`.

        Returns
        -------
        self : DPPipeline

        Raises
        ------
        ValueError
            If a step learns from the rows without a guarantee and
            ``allow_nonprivate=False``.
        """
        self._fit_recorded("fit", X, y, params)
        return self

    def _fit_recorded(self, method, X, y, params):
        """Check the steps, run ``Pipeline.<method>``, record the spend; its result."""
        self._check_privacy_before_fit()
        params, unit = self._route_groups(params)
        out = getattr(super(), method)(X, y, **params)
        self._record_privacy(unit)
        return out

    @available_if(_can_fit_transform)
    def fit_transform(self, X, y=None, **params):
        """Check the steps, fit, record the spend, and transform with the final step.

        Parameters
        ----------
        X, y, **params
            As for :meth:`fit` (``params`` as in
            :meth:`sklearn.pipeline.Pipeline.fit_transform`).

        Returns
        -------
        Xt : ndarray of shape (n_samples, n_transformed_features)
        """
        return self._fit_recorded("fit_transform", X, y, params)

    @available_if(_final_has("fit_predict"))
    def fit_predict(self, X, y=None, **params):
        """Check the steps, fit, record the spend, and ``fit_predict`` with the final step.

        Parameters
        ----------
        X, y, **params
            As for :meth:`fit` (``params`` as in
            :meth:`sklearn.pipeline.Pipeline.fit_predict`).

        Returns
        -------
        y_pred : ndarray
        """
        return self._fit_recorded("fit_predict", X, y, params)


def _it(leaks):
    return "it" if len(leaks) == 1 else "them"


def make_dp_pipeline(
    *steps, memory=None, transform_input=None, verbose=False, allow_nonprivate=False
):
    """Build a :class:`DPPipeline` from estimators, naming the steps automatically.

    The private counterpart of :func:`sklearn.pipeline.make_pipeline` (same naming:
    the lower-cased class name, numbered when repeated).

    Parameters
    ----------
    *steps : estimators
        The steps, in order.
    memory, transform_input, verbose :
        As in :func:`sklearn.pipeline.make_pipeline`.
    allow_nonprivate : bool, default=False
        See :class:`DPPipeline`.

    Returns
    -------
    DPPipeline

    Notes
    -----
    The pipeline's spend is the sum of its steps' (sequential composition, add/remove
    one row, ``n`` public); see :class:`DPPipeline`.

    Examples
    --------
    >>> from skdp.linear_model import DPLinearRegression
    >>> from skdp.pipeline import make_dp_pipeline
    >>> from skdp.preprocessing import PublicBoundsScaler
    >>> pipe = make_dp_pipeline(PublicBoundsScaler(bounds=(0, 10)),
    ...                         DPLinearRegression(epsilon=1.0))
    >>> [name for name, _ in pipe.steps]
    ['publicboundsscaler', 'dplinearregression']
    """
    named = make_pipeline(*steps, memory=memory, transform_input=transform_input).steps
    return DPPipeline(
        named,
        memory=memory,
        transform_input=transform_input,
        verbose=verbose,
        allow_nonprivate=allow_nonprivate,
    )

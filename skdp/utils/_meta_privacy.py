"""The privacy verdict of a composite estimator (Pipeline, ColumnTransformer, FeatureUnion).

Used by :mod:`skdp.pipeline` (``DPPipeline``, ``check_pipeline_privacy``) and by
:mod:`skdp.model_selection` (which refuses estimators that learn without a guarantee and
plans a search's budget from each candidate's declared spend). Both are layer 5 and may
not import each other, so the shared logic lives here, in layer 0. It reads skdp
estimators by duck typing (``_record_privacy_spent`` / ``_nonprivate_options``, what
:class:`skdp.base.DPEstimatorMixin` provides), because ``utils`` may not import ``base``.

The rule set is conservative: a step is private or public only if it is recognised as
such; anything else that is fitted on the rows learns from them without a guarantee.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

__all__ = [
    "GUARANTEE_ORDER",
    "PipelinePrivacyReport",
    "StepPrivacy",
    "check_pipeline_privacy",
    "weakest_guarantee",
]

#: From weakest to strongest.
GUARANTEE_ORDER = ("none", "approximate", "exact")

PRIVATE = "private"
PUBLIC = "public"
LEARNS = "learns_without_guarantee"
STATUSES = (PRIVATE, PUBLIC, LEARNS)


def weakest_guarantee(guarantees):
    """The weakest of ``"none" < "approximate" < "exact"`` (``"exact"`` if empty)."""
    ranks = [GUARANTEE_ORDER.index(g) for g in guarantees]
    return GUARANTEE_ORDER[min(ranks)] if ranks else "exact"


@dataclass(frozen=True)
class StepPrivacy:
    """The privacy status of one leaf step of a composite estimator.

    Attributes
    ----------
    name : str
        The step's path in ``get_params`` notation (``"columntransformer__num__scaler"``).
    estimator : str
        The step's class name, or ``"passthrough"`` / ``"drop"``.
    status : {"private", "public", "learns_without_guarantee"}
        ``"private"``: a skdp DP estimator, charged its ``(epsilon, delta)``;
        ``"public"``: learns nothing private from the rows (``passthrough``/``drop``, a
        stateless transformer, a skdp public transformer, a ``OneHotEncoder`` with
        declared categories, see :func:`check_pipeline_privacy`);
        ``"learns_without_guarantee"``: fitted on the rows with no privacy guarantee.
    epsilon, delta : float
        What the step spends: after ``fit`` its ``epsilon_spent_``/``delta_spent_``,
        before ``fit`` its declared ``epsilon``/``delta`` parameters (an upper bound);
        0 for public steps, ``inf`` epsilon for steps that learn without a guarantee.
    guarantee : {"exact", "approximate", "none"} or None
        The step's ``privacy_guarantee_``; for a DP step not fitted yet the one its fit
        will record, planned from its parameters (``None`` when it cannot say).
    fitted : bool
        Whether ``epsilon``/``delta`` are the fitted spend (``False``: declared).
    reason : str
        Why the step got its status.
    """

    name: str
    estimator: str
    status: str
    epsilon: float
    delta: float
    guarantee: str | None
    fitted: bool
    reason: str


@dataclass(frozen=True, repr=False)
class PipelinePrivacyReport:
    """What a composite estimator spends, step by step, and in total.

    Returned by :func:`skdp.pipeline.check_pipeline_privacy`.

    Attributes
    ----------
    steps : tuple of StepPrivacy
        Every leaf step, depth first, in the order they are fitted.
    epsilon, delta : float
        Sequential composition of the steps: every step is fitted on the same rows, so
        the epsilons add and the deltas add (capped at 1). ``inf`` epsilon when a step
        learns without a guarantee or spends ``inf``.
    privacy_guarantee : {"exact", "approximate", "none"} or None
        The weakest of the steps' guarantees; ``"none"`` when a step learns without a
        guarantee; before ``fit`` the guarantee planned from the parameters (``None``
        when an unfitted step cannot plan it) and no step leaks.
    fitted : bool
        Whether every DP step is fitted (the totals are then the fitted spend; else
        some are declared budgets, an upper bound).
    relation : str
        ``"add_remove"``: the steps' neighbouring relation (add or remove one row, ``n``
        public), under which the total holds.
    """

    steps: tuple
    epsilon: float
    delta: float
    privacy_guarantee: str | None
    fitted: bool
    relation: str = "add_remove"

    @property
    def is_private(self):
        """Whether no step learns from the rows without a guarantee."""
        return not self.learns_without_guarantee

    @property
    def learns_without_guarantee(self):
        """The steps fitted on the rows without a guarantee."""
        return tuple(s for s in self.steps if s.status == LEARNS)

    def __repr__(self):
        leaks = [s.name for s in self.learns_without_guarantee]
        return (
            f"PipelinePrivacyReport(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"privacy_guarantee={self.privacy_guarantee!r}, fitted={self.fitted!r}, "
            f"n_steps={len(self.steps)}, learns_without_guarantee={leaks!r})"
        )

    def __str__(self):
        rows = [("step", "estimator", "status", "epsilon", "delta", "guarantee")]
        for s in self.steps:
            rows.append(
                (
                    s.name,
                    s.estimator,
                    s.status,
                    _fmt(s.epsilon),
                    _fmt(s.delta),
                    "?" if s.guarantee is None else s.guarantee,
                )
            )
        g = "?" if self.privacy_guarantee is None else self.privacy_guarantee
        rows.append(("total", "", "sequential", _fmt(self.epsilon), _fmt(self.delta), g))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
        kind = "fitted spend" if self.fitted else "declared budgets (not all steps fitted)"
        return "\n".join(lines + [f"add/remove one row, n public; {kind}"])


def _fmt(x):
    return "inf" if math.isinf(x) else f"{x:.6g}"


# ------------------------------------------------------------------ classification
def _is_dp_estimator(est):
    return callable(getattr(est, "_record_privacy_spent", None)) and callable(
        getattr(est, "_nonprivate_options", None)
    )


def _is_public_transform(est):
    return getattr(type(est), "_skdp_public_transform", False) is True


def _number(value, default):
    if isinstance(value, Real) and not isinstance(value, bool):
        return float(value)
    return default


def _declared(est):
    """``(epsilon, delta)`` a not-yet-fitted DP estimator may spend, from its parameters.

    An estimator whose spend is not its ``epsilon`` parameter (e.g. an imputer with a
    public constant fill) says so through ``_planned_privacy_spend()``.
    """
    planned = getattr(est, "_planned_privacy_spend", None)
    if callable(planned):
        eps, delta = planned()
        return _number(eps, math.inf), _number(delta, 1.0)
    params = est.get_params(deep=False)
    if "epsilon" not in params:
        return 0.0, _number(params.get("delta", 0.0), 1.0)  # no budget: spends 0
    eps = params["epsilon"]
    eps = _number(eps, math.inf)  # None or a string: unknown, so unbounded
    return eps, _number(params.get("delta", 0.0), 1.0)


def _dp_step(name, est):
    cls = type(est).__name__
    public = _is_public_transform(est)
    kind = "skdp public transformer" if public else "skdp DP estimator"
    if hasattr(est, "epsilon_spent_"):
        eps, delta = float(est.epsilon_spent_), float(getattr(est, "delta_spent_", 0.0))
        guarantee = getattr(est, "privacy_guarantee_", "exact")
        options = list(getattr(est, "nonprivate_options_", []) or [])
        if guarantee == "none" or math.isinf(eps) or options:
            why = f"non-private option(s): {', '.join(options)}" if options else "epsilon=inf"
            return StepPrivacy(name, cls, LEARNS, math.inf, 0.0, "none", True, f"{kind}; {why}")
        status = PUBLIC if public and eps == 0 and delta == 0 else PRIVATE
        return StepPrivacy(name, cls, status, eps, delta, guarantee, True, f"{kind}, fitted")
    options = list(est._nonprivate_options())
    eps, delta = _declared(est)
    if options or math.isinf(eps):
        why = f"non-private option(s): {', '.join(options)}" if options else "epsilon=inf"
        return StepPrivacy(name, cls, LEARNS, math.inf, 0.0, "none", False, f"{kind}; {why}")
    if public and eps == 0 and delta == 0:
        return StepPrivacy(name, cls, PUBLIC, 0.0, 0.0, "exact", False, kind)
    planned = getattr(est, "_planned_privacy_guarantee", None)
    guarantee = planned() if callable(planned) else None
    return StepPrivacy(name, cls, PRIVATE, eps, delta, guarantee, False, f"{kind}, declared budget")


def _public(name, cls, reason):
    return StepPrivacy(name, cls, PUBLIC, 0.0, 0.0, "exact", False, reason)


def _learns(name, cls, reason):
    return StepPrivacy(name, cls, LEARNS, math.inf, 0.0, "none", False, reason)


def _explicit_categories(categories):
    return not isinstance(categories, str) and categories is not None


def _sklearn_step(name, est):  # noqa: C901 - one branch per known class
    """Known stateless or public scikit-learn transformers; everything else learns."""
    from sklearn.impute import MissingIndicator
    from sklearn.preprocessing import (
        Binarizer,
        FunctionTransformer,
        Normalizer,
        OneHotEncoder,
        PolynomialFeatures,
    )

    cls = type(est).__name__
    if isinstance(est, FunctionTransformer):
        return _learns(
            name,
            cls,
            "its func receives the whole batch and may compute a statistic of it "
            "(e.g. centring by the batch mean); if func acts on each row alone, declare "
            "it with skdp.preprocessing.RowwiseFunctionTransformer",
        )
    if type(est) in (Normalizer, Binarizer, PolynomialFeatures):
        return _public(name, cls, "stateless: fit reads only the number of columns")
    if type(est) is MissingIndicator:
        if est.features == "all":
            return _public(name, cls, "features='all': fit keeps every column")
        return _learns(name, cls, "features='missing-only' learns which columns have NaN")
    if type(est) is OneHotEncoder:
        problems = []
        if not _explicit_categories(est.categories):
            problems.append("categories='auto' reads the category set off the rows")
        if est.handle_unknown == "error":
            # the input-domain rule: refusing an undeclared level is allowed, printing it
            # is not (skdp's own encoders and estimators name the column only)
            problems.append(
                "handle_unknown='error' puts the unseen value into its error message "
                "(skdp.preprocessing.PublicOneHotEncoder refuses it naming the column only)"
            )
        elif est.handle_unknown not in ("ignore", "infrequent_if_exist"):
            problems.append(
                f"handle_unknown={est.handle_unknown!r} fits on through unseen values and "
                "warns about them, a message that depends on the private rows"
            )
        if est.drop is not None:
            problems.append("drop is set (transform warns on unknown categories)")
        if est.min_frequency is not None or est.max_categories is not None:
            problems.append("min_frequency/max_categories count the categories")
        if problems:
            return _learns(name, cls, "; ".join(problems))
        return _public(name, cls, "declared categories, handle_unknown='ignore'")
    return _learns(name, cls, "not a skdp DP estimator and not known to be stateless")


def _column_selector_problem(columns):
    from sklearn.compose import make_column_selector

    if callable(columns) and not isinstance(columns, make_column_selector):
        return "a callable column selector may read the rows to choose columns"
    return None


def _is_passthrough(est):
    return isinstance(est, str) and est == "passthrough"


def _walk(est, name, out):
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion, Pipeline

    if est is None or (isinstance(est, str) and est in ("passthrough", "drop")):
        label = "passthrough" if est is None else est
        out.append(_public(name or label, label, "no estimator"))
        return
    prefix = f"{name}__" if name else ""
    if isinstance(est, Pipeline):
        for step_name, step in est.steps:
            _walk(step, prefix + step_name, out)
        return
    if isinstance(est, FeatureUnion):
        for step_name, step in est.transformer_list:
            _walk(step, prefix + step_name, out)
        return
    if isinstance(est, ColumnTransformer):
        for step_name, _, columns in est.transformers:
            problem = _column_selector_problem(columns)
            if problem:
                out.append(_learns(prefix + step_name, "column selector", problem))
        if hasattr(est, "transformers_"):  # fitted: the fitted clones
            # scikit-learn fits a declared "passthrough" (the remainder's default when
            # set, or a listed one) as an identity FunctionTransformer: still passthrough
            declared = {n: t for n, t, _ in est.transformers}
            declared["remainder"] = est.remainder
            items = [
                (n, "passthrough" if _is_passthrough(declared.get(n)) else t)
                for n, t, _ in est.transformers_
            ]
        else:
            items = [(n, t) for n, t, _ in est.transformers] + [("remainder", est.remainder)]
        for step_name, step in items:
            _walk(step, prefix + step_name, out)
        return
    if _is_dp_estimator(est):
        out.append(_dp_step(name or type(est).__name__, est))
        return
    out.append(_sklearn_step(name or type(est).__name__, est))


def check_pipeline_privacy(estimator):
    """The privacy verdict of an estimator or a composite of estimators.

    Walks :class:`~sklearn.pipeline.Pipeline` (and :class:`~skdp.pipeline.DPPipeline`),
    :class:`~sklearn.compose.ColumnTransformer` and
    :class:`~sklearn.pipeline.FeatureUnion`, nested to any depth, and classifies every
    leaf step; see :func:`skdp.pipeline.check_pipeline_privacy` for the rule set.

    Parameters
    ----------
    estimator : estimator
        Fitted or not.

    Returns
    -------
    PipelinePrivacyReport
    """
    steps = []
    _walk(estimator, "", steps)
    steps = tuple(steps)
    leaks = any(s.status == LEARNS for s in steps)
    eps = math.inf if leaks else math.fsum(s.epsilon for s in steps)
    if math.isnan(eps):  # inf - inf cannot happen (all >= 0); keep it safe
        eps = math.inf
    delta = min(1.0, math.fsum(s.delta for s in steps))
    dp = [s for s in steps if s.status == PRIVATE]
    fitted = all(s.fitted for s in dp)
    if leaks:
        guarantee = "none"
    elif any(s.guarantee is None for s in steps):
        guarantee = None
    else:
        guarantee = weakest_guarantee(s.guarantee for s in steps)
    return PipelinePrivacyReport(steps, float(eps), float(delta), guarantee, fitted)

"""DPLogisticRegression: objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011,
Algorithm 2; the analysis of Kifer, Smith & Thakurta 2012) or DP-SGD for the logistic
loss, binary or one-vs-rest, chosen by a public rule by default."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets

from skdp.base import DPEstimatorMixin
from skdp.linear_model._functional import _bounds_param
from skdp.linear_model._inference_logistic import LogisticInferenceMixin, release_fisher
from skdp.linear_model._logistic_dpsgd import fit_binary_dpsgd
from skdp.linear_model._logistic_input import (
    check_patient_groups,
    resolve_classes,
    resolve_feature_bounds,
)
from skdp.linear_model._logistic_plan import (  # noqa: F401 - re-exported
    AUTO_DPSGD_BELOW,
    LogisticPlan,
    _rate_of_scale,
    auto_mechanism,
)
from skdp.linear_model._logistic_predict import LogisticPredictMixin
from skdp.linear_model._objective_perturbation import (  # noqa: F401 - re-exported
    LOGISTIC_SMOOTHNESS,
    NEWTON_STEPS,
    RIDGE_SHARE,
    _scaled_rows,
    _solve,
    objective_perturbation_parameters,
    sample_noise,
)
from skdp.utils._deprecation import RenamedAttribute
from skdp.utils._docstrings import insert_docs
from skdp.utils._groups import (
    bound_contributions,
)
from skdp.utils._keyword_init import keyword_init
from skdp.utils._logging import get_logger, log_progress, verbose_handler
from skdp.utils._random import fit_streams
from skdp.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    validate_data,
)
from skdp.utils.validation import (
    check_clip_bounds_declared,
    check_finite_release,
    check_no_fit_params,
)

__all__ = ["DPLogisticRegression", "auto_mechanism"]

_logger = get_logger(__name__)


@insert_docs
class DPLogisticRegression(
    LogisticInferenceMixin, LogisticPredictMixin, DPEstimatorMixin, ClassifierMixin, BaseEstimator
):
    """Differentially private logistic regression (objective perturbation or DP-SGD).

    By default (``mechanism="auto"``) the mechanism is chosen by a public rule of
    ``(n, p, K, epsilon, delta)`` (:func:`auto_mechanism`): DP-SGD where few rows carry
    each unit of objective-perturbation noise and ``delta > 0`` is allowed, objective
    perturbation (pure ``epsilon``-DP) otherwise; ``mechanism_`` records the choice.

    Objective perturbation: every row is clipped to the public ``bounds_X``, mapped
    onto ``[-1, 1]`` per feature and (with an intercept, after appending a constant 1)
    divided by ``sqrt(d')``, ``d' = p + 1`` (``p`` without intercept), so that it lies in
    the unit L2 ball. For each class ``k`` (one problem when there are two classes, one-vs-rest
    otherwise) the released weights minimise the perturbed, strongly convex objective

        ``F_k(w) = sum_i log(1 + exp(-y_ik w . x~_i)) + (lambda_k / 2) ||w||^2 + b_k . w``

    where ``b_k`` has density proportional to ``exp(-beta_k ||b_k||)`` (objective
    perturbation, Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2). ``F_k`` is
    minimised with L-BFGS and polished with Newton steps.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy loss of one ``fit`` (including a private bound estimate, if any).
        ``math.inf`` gives the non-private minimiser with ridge ``1 / C``.
    classes : None, "data" or array-like of at least 2 labels, default=None
        The public label set (``y`` may hold any subset of it); ``classes_`` keeps the
        declared order. It must be declared: ``None`` raises ``ValueError`` at ``fit``,
        because which labels occur in ``y`` is a fact about the private rows.
        ``"data"`` is the explicit opt-in that reads the labels off ``y`` (as
        scikit-learn does; at least two must occur): it emits
        :class:`~skdp.exceptions.PrivacyLeakWarning` and the fit is recorded as
        non-private (``epsilon_spent_ = inf``).
    bounds_X : None, "private", "data", (lo, hi) of scalars or per-feature arrays, or \
dict, default=None
        Public bounds of the features (a dict ``{column: (lo, hi)}`` for a DataFrame),
        as in :class:`DPLinearRegression`. ``None``: a private estimate spending 10 %
        of ``epsilon`` (:func:`skdp.mechanisms.resolve_bounds`; the rest goes to the
        model) where public ``n``, ``p`` and ``epsilon`` make it reliable; otherwise
        ``fit`` refuses with a ``ValueError`` that says what to declare
        (:doc:`/choosing_bounds`). ``"private"``: the explicit opt-in to that estimate
        even where it cannot be reliable (with a
        :class:`~skdp.exceptions.BoundsEstimateWarning`). ``"data"``: the non-private
        opt-in (``PrivacyLeakWarning``).
    C : float, default=1.0
        Inverse regularisation strength, as in scikit-learn's ``LogisticRegression``
        but in the scaled space: the ridge on the sum of the losses is ``lambda =
        1 / C`` (the intercept is penalised too). The mechanism raises it to
        ``0.25 / (exp(0.1 epsilon_k) - 1)`` when that is larger (Notes). A ``C`` so
        small that ``1 / C`` overflows (below ``2.2e-308``) raises ``ValueError``.
    fit_intercept : bool, default=True
        Fit an intercept (a constant coordinate in the scaled row). With ``False`` the
        features are divided by their largest absolute bound, so the model stays
        linear through the origin in original units.
    clip : bool, default=True
        Clip values to the bounds (silently). ``False`` raises ``ValueError`` naming
        the column when a value lies outside them; it needs declared bounds (with a
        private estimate the refusal would depend on the data).
    max_iter : int, default=1000
        L-BFGS iterations per class (``mechanism="objective"``).
    tol : float, default=1e-10
        L-BFGS gradient tolerance on the objective divided by ``n``
        (``mechanism="objective"``).
    mechanism : {"auto", "objective", "dpsgd"}, default="auto"
        ``"objective"``: objective perturbation, pure ``epsilon``-DP (Notes).
        ``"dpsgd"``: DP-SGD on skdp's engine (:func:`skdp.training.train_dpsgd`:
        Poisson sampling, per-record clipping, Gaussian noise, the ``accountant``'s
        composition) on the rows mapped onto ``[-1, 1]`` by ``bounds_X`` (plus a
        constant 1 for the intercept), ``(epsilon, delta)``-DP; better at small
        ``n epsilon / d`` (``benchmarks/logistic_regression.py``); needs ``delta > 0``
        and torch. ``"auto"``: ``"dpsgd"`` when ``0 < delta < 1 / n`` and
        ``n epsilon / (K' (p + 1)) < 100`` (``K'`` = 1 for two classes, the number of
        classes otherwise), ``"objective"`` otherwise (:func:`auto_mechanism`; every
        input is public, so the choice reveals nothing about the rows). With
        ``delta=0`` it is always ``"objective"``.
    delta : float, default=1e-5
        The ``delta`` DP-SGD may spend (keep it well below ``1 / n``). Objective
        perturbation spends none (``delta_spent_ = 0``). The default is the same
        ``1e-5`` as skdp's other ``(epsilon, delta)`` estimators, so that the default
        ``mechanism="auto"`` can pick DP-SGD where it is better (small tables); pass
        ``delta=0`` for a pure ``epsilon``-DP fit (objective perturbation). A model
        selection or ledger plans with the declared ``delta`` before the mechanism is
        known, so it charges ``delta`` even when ``"auto"`` picks objective
        perturbation.
    n_iter : int, default=300
        DP-SGD steps (``mechanism="dpsgd"``), each one accounted.
    batch_size : int, default=64
        Expected Poisson batch size (``mechanism="dpsgd"``).
    learning_rate : float, default=0.05
        Adam step size (``mechanism="dpsgd"``).
    max_grad_norm : float, default=1.0
        Per-record gradient clipping norm (``mechanism="dpsgd"``).
    accountant : str, default="pld"
        DP-SGD accountant (``mechanism="dpsgd"``), a key of
        :func:`skdp.accounting.available_accountants`.
    verbose : int, default=0
        Positive: show the progress of ``fit`` on standard error (see the glossary's
        ``verbose``). Progress is always logged to the ``"skdp"`` logger: one record per
        objective-perturbation problem, or per logged DP-SGD step; a record carries the
        step, the planned total and the epsilon spent so far (public quantities), never
        a loss of a private fit.
    max_rows_per_group : int or None, default=None
        The public number of rows one patient may contribute when ``fit`` gets
        ``groups`` (from the visit schedule or the study protocol, never from the
        data); required with ``groups`` (:doc:`/patients`).
    inference : bool, default=False
        Also release, per problem, the Fisher information at the released weights with
        Laplace noise, for :meth:`conf_int` and :meth:`summary`: it takes 35 % of each
        problem's budget (50 % where the public ``n epsilon / d'`` is below 40, at row
        level) inside the same ``epsilon`` (``privacy_breakdown_["fisher"]``),
        needs objective perturbation (``"auto"`` then picks it; ``"dpsgd"`` is
        refused), and ``False`` leaves every release unchanged (:doc:`/inference`).
    random_state : None, int, Generator or SeedSequence, default=None
        Seed of the noise. ``None`` draws fresh OS entropy. Keep it secret for a real
        release: the seed lets anyone subtract the noise.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    mechanism_ : {"objective", "dpsgd"}
        The mechanism the fit used (``mechanism``, or the choice of ``"auto"``).
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights in original units (one row for two classes).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    bounds_X_ : tuple of two ndarrays of shape (n_features,)
        The (declared or privately estimated) feature bounds used.
    ridge_ : float
        ``lambda``: the ridge actually used (``1 / C``, or larger, Notes).
    noise_scale_ : dict of str to float
        ``{"objective": 1 / beta}`` for objective perturbation: the noise density is
        proportional to ``exp(-beta ||b||)``, so ``||b||`` is Gamma with shape ``d'``
        and this scale (0 when non-private); empty for DP-SGD, whose noise is
        ``noise_multiplier_``. ``noise_rate_`` (``beta``) is its deprecated form
        (removed in 0.2).
    epsilon_spent_, delta_spent_ : float
        ``epsilon``, and ``delta`` for DP-SGD (0 for objective perturbation).
    privacy_guarantee_ : str
        ``"exact"`` (DP-SGD: the ``accountant``'s guarantee, ``"exact"`` for PLD and
        RDP).
    privacy_breakdown_ : dict
        Epsilon of ``"bounds"`` and ``"objective"`` (or ``"dpsgd"``; all problems
        together); sums to ``epsilon_spent_``.
    n_iter_ : int
        DP-SGD steps run per problem (``n_iter``); 0 for objective perturbation.
    loss_curve_ : ndarray of shape (0,) or (n_logged,)
        Empty for a private fit (the training loss is a statistic of the private rows);
        the logged mean batch losses of a non-private (``epsilon=inf``) DP-SGD fit
        (averaged over the one-vs-rest problems).
    noise_multiplier_ : float
        DP-SGD's calibrated noise multiplier (``mechanism="dpsgd"`` only).
    privacy_unit_ : {"row", "group"}
        What ``epsilon_spent_`` protects: one row, or one patient (``groups``).
    max_rows_per_group_ : int or None
        The contribution bound of a patient-level fit (``None`` per row).
    released_statistics_ : dict
        ``inference=True`` only: ``"fisher"``, the noisy Fisher information of each
        problem in the scaled units, shape ``(n_problems, d', d')``; ``"mle"``, the
        unpenalised weights of a non-private fit (``epsilon=inf``), else ``None``;
        ``"information"``, the public ``n epsilon_k / d'`` of a row-level fit
        (``None`` with ``groups``), by which ``conf_int`` picks its method.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    See Also
    --------
    DPLinearRegression : the same bounds handling for least squares.
    ExpMFlowClassifier : an exponential-mechanism classifier with an approximate guarantee.

    Notes
    -----
    **Privacy.** Neighbouring relation: add or remove one row, ``n`` public
    (:ref:`neighbouring-relation`). ``mechanism="auto"`` reads only public quantities:
    ``n``, ``p``, the number of declared classes, ``epsilon`` and ``delta``
    (:func:`auto_mechanism`), so which mechanism ran (``mechanism_``) reveals nothing
    else. Objective perturbation itself does not read ``n``: with
    ``mechanism="objective"`` and declared ``bounds_X``, ``n`` need not even be public.
    ``epsilon_b`` (10 % of ``epsilon``) goes to a private bound estimate when
    ``bounds_X`` is ``None`` or ``"private"``, 0 otherwise; the rest, ``epsilon_r``, is
    split evenly over the ``K'`` problems (``K' = 1`` for two classes, ``K`` one-vs-rest problems
    otherwise), ``epsilon_k = epsilon_r / K'``, and sequential composition gives
    ``epsilon`` in total, ``delta = 0`` (objective perturbation) or ``delta`` (DP-SGD).

    For one problem (Kifer, Smith & Thakurta 2012, Theorem 2; Chaudhuri et al. 2011,
    Theorem 9, re-derived here for add/remove): write ``l_i(w) = log(1 + exp(-y_i w .
    x~_i))`` with ``||x~_i|| <= 1``, so ``||grad l_i|| <= 1`` and ``grad^2 l_i =
    l''(.) x~_i x~_i^T`` has rank one and eigenvalue at most ``c = 1/4``. ``F_D`` is
    ``lambda``-strongly convex, so ``b -> w*(b)`` is a bijection with inverse ``b_D(w) =
    -sum_i grad l_i(w) - lambda w`` and the density of the release is ``p_D(w) =
    nu(b_D(w)) det H_D(w)``, ``H_D = sum_i grad^2 l_i + lambda I``. Adding a row ``z``
    gives ``b_{D'}(w) = b_D(w) - grad l_z(w)`` (a shift of norm at most 1, so the ratio
    of ``nu(b) ∝ exp(-beta ||b||)`` is within ``exp(+-beta)``) and ``det H_{D'} / det
    H_D = 1 + l''_z x~_z^T H_D^{-1} x~_z``, in ``[1, 1 + c / lambda]``. Hence both
    ratios ``p_D / p_{D'}`` are at most ``exp(beta) (1 + c / lambda)``: the release is
    ``epsilon_k``-DP for ``beta = epsilon_k - log(1 + c / lambda)``. With ``groups``
    (add or remove one patient, at most ``k = max_rows_per_group`` rows each, chosen
    at random) the shift is at most ``k`` and the determinant ratio at most ``(1 + c /
    lambda)^k``, so the ratio is ``(exp(beta) (1 + c / lambda))^k``: each problem runs
    at ``epsilon_k / k`` per row, which is ``epsilon_k`` per patient. The ridge is
    ``lambda = max(1 / C, c / (exp(0.1 epsilon_k) - 1))``; the second term (CMS's extra
    ridge ``Delta``; KST take ``exp(epsilon_k / 2)``, i.e. half of ``epsilon_k``) keeps
    ``log(1 + c / lambda) <= 0.1 epsilon_k``, so ``beta >= 0.9 epsilon_k``
    (``noise_scale_["objective"] = 1 / beta``). Why 0.1 and not KST's half: when the
    ridge dominates the data's Hessian (small ``n epsilon``), the released weights are
    about ``(g - b) / lambda`` with ``g`` the loss gradient at 0, so their *direction*
    (all that AUC and the sign of the decision depend on) does not change with
    ``lambda`` while the noise ``||b||`` falls like ``1 / beta``: a larger ridge only
    helps there. When the data's Hessian
    (growing like ``n``) dominates, a ridge of ``c / (exp(0.1 eps) - 1)``, about
    ``2.5 / eps``, is negligible. The rule uses ``epsilon`` only (not ``n``, not the
    data). Under replace-one the gradient shift is
    at most 2 and the determinant ratio at most ``1 + c / lambda``, so ``beta`` would be
    ``(epsilon - log(1 + c / lambda)) / 2``; a fit at ``epsilon / 2`` is replace-one
    ``epsilon``-DP (a replacement is a removal plus an addition). CMS state Algorithm 2
    for replace-one with the more conservative ``2 log(1 + c / (n Lambda))`` (their
    ``Lambda`` is ``lambda / n``); the noise here is the same mechanism with the
    add/remove constants. Sample weights are rejected (they would change both bounds).

    **DP-SGD** (``mechanism="dpsgd"``). Each problem minimises the mean logistic loss of
    a linear model over the rows ``(u, 1)``, ``u`` the features mapped onto ``[-1, 1]``
    by ``bounds_X``, from zero weights, with ``n_iter`` Adam steps of the
    Poisson-subsampled Gaussian mechanism on per-record gradients clipped to
    ``max_grad_norm`` (Abadi et al. 2016), under add/remove one row; the noise
    multiplier is calibrated so that the ``accountant`` (default PLD) composes the steps
    to ``(epsilon_k, delta / K')``, ``epsilon_k`` as above. With ``groups`` patients are
    sampled (``batch_size`` counts patients) and each one's gradient sum over its at
    most ``k`` rows, divided by ``k``, is clipped as one vector: sensitivity
    ``max_grad_norm`` per patient, ``epsilon_k`` per patient with no division by ``k``
    (:mod:`skdp.training._patients`). ``privacy_guarantee_`` is the accountant's
    (``"exact"`` for PLD and RDP). Nothing else reads the rows: the
    hyperparameters are public defaults, the same for every data set.

    **Floating point.** The guarantee is for the mathematical mechanism: the noise
    ``b`` (a Gamma norm times a normalised Gaussian direction) and the private bound
    estimate are drawn in floating point from ``random_state`` (Mironov 2012 applies in
    principle), and the proof assumes the exact minimiser of ``F_k`` while the released
    weights are numerical (L-BFGS then Newton steps in float64; the residual gradient
    norm over ``ridge_``, which bounds the distance to the exact minimiser, is typically
    ``< 1e-10``). The solver's iteration count and residual are not stored: they depend
    on the private rows beyond the released minimiser.

    **Accuracy.** The noise moves the weights by about ``||H^{-1} b||``, with ``||b||``
    about ``d' / beta``, against a Hessian growing like ``n`` times the variance of the
    scaled rows: close to the ridge solution when ``n epsilon`` is large and the
    features fill their declared box. ``benchmarks/logistic_regression.py`` compares
    it with scikit-learn, :class:`ExpMFlowClassifier` and DP-SGD on skdp's engine
    (test AUC, 5 seeds): on a 4-feature simulator with 4500 rows it is within 0.01 of
    scikit-learn from ``epsilon = 0.1``; on breast_cancer (426 rows, 30 features) it
    trails DP-SGD at ``epsilon = 0.3`` because the noise norm grows like
    ``d' / epsilon`` (see the measured table in :ref:`dp-logistic-benchmark`). That is
    what ``mechanism="auto"`` decides on: DP-SGD below ``n epsilon / (K' d') = 100``,
    where it won most cells of the measured table in :ref:`dp-logistic-auto`.

    References
    ----------
    K. Chaudhuri, C. Monteleoni, A. D. Sarwate. "Differentially private empirical risk
    minimization." Journal of Machine Learning Research 12, 1069-1109, 2011.

    D. Kifer, A. Smith, A. Thakurta. "Private convex empirical risk minimization and
    high-dimensional regression." COLT 2012.

    {ref_mironov2012}

    M. Abadi et al. "Deep learning with differential privacy." CCS 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model import DPLogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 2))
    >>> y = (X @ [2.0, -1.0] + 0.3 * rng.normal(size=5000) > 0).astype(int)
    >>> clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], bounds_X=(-1, 1),
    ...                            random_state=0).fit(X, y)
    >>> clf.epsilon_spent_, clf.privacy_guarantee_, sorted(clf.privacy_breakdown_)
    (1.0, 'exact', ['bounds', 'objective'])
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    _parameter_constraints: dict = {
        "epsilon": DPEstimatorMixin._privacy_parameter_constraints["epsilon"],
        "classes": [None, StrOptions({"data"}), "array-like"],
        "bounds_X": _bounds_param() + [dict],
        "C": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "clip": ["boolean"],
        "max_iter": [Interval(Real, 1, None, closed="left")],
        "max_rows_per_group": [None, Interval(Integral, 1, None, closed="left")],
        "inference": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "mechanism": [StrOptions({"auto", "objective", "dpsgd"})],
        "delta": DPEstimatorMixin._privacy_parameter_constraints["delta"],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        **DPEstimatorMixin._common_constraints("random_state", "accountant", "verbose"),
    }

    __init__ = keyword_init(
        [
            ("epsilon", 1.0),
            ("classes", None),
            ("bounds_X", None),
            ("C", 1.0),
            ("fit_intercept", True),
            ("clip", True),
            ("max_iter", 1000),
            ("tol", 1e-10),
            ("mechanism", "auto"),
            ("delta", 1e-5),
            ("n_iter", 300),
            ("batch_size", 64),
            ("learning_rate", 0.05),
            ("max_grad_norm", 1.0),
            *DPEstimatorMixin._common_params("accountant", "verbose"),
            ("max_rows_per_group", None),
            ("inference", False),
            *DPEstimatorMixin._common_params("random_state"),
        ],
        qualname="DPLogisticRegression.__init__",
    )

    _later_parameters = {"inference": False}  # out of the seed material when False

    # deprecated: the rate beta of the objective's noise (removed in 0.2)
    noise_rate_ = RenamedAttribute(
        "noise_scale_", convert=_rate_of_scale, note=' (its inverse, the rate "beta")'
    )

    def _mechanism_guarantee(self):
        # the accountant is used by DP-SGD only; objective perturbation is pure DP.
        # "auto" decides with n, unknown before the fit: plan the weaker of the two
        # wherever it may pick DP-SGD (delta > 0), so a fit never records less
        sgd_possible = self.mechanism == "dpsgd" or (
            self.mechanism == "auto" and isinstance(self.delta, Real) and self.delta > 0
        )
        return super()._mechanism_guarantee() if sgd_possible else "exact"

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, groups=None, **fit_params):
        """Fit the private logistic model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels among the declared ``classes``.
        groups : array-like of shape (n_samples,), default=None
            The patient of each row: the guarantee is then per patient (each keeps at
            most ``max_rows_per_group`` rows, chosen at random; Notes). Objective
            perturbation (``mechanism="auto"`` picks it) or per-patient DP-SGD;
            needs declared ``bounds_X``.
        **fit_params : dict
            Only ``sample_weight=None`` is accepted; weights are rejected.

        Returns
        -------
        self
        """
        X, y, classes = self._validate_input(X, y, fit_params)
        n, p = X.shape
        codes, k = check_patient_groups(self, groups, n)
        epsilon, delta = self._check_privacy_params(
            require_delta=self.mechanism == "dpsgd" and math.isfinite(self.epsilon)
        )
        n_problems = 1 if classes.shape[0] == 2 else classes.shape[0]
        mechanism = self.mechanism
        if mechanism == "dpsgd" and self.inference:
            raise ValueError("inference=True needs mechanism='objective' (or 'auto')")
        if mechanism == "auto" and (codes is not None or self.inference):
            mechanism = "objective"  # patient-level analysis and Fisher release
        elif mechanism == "auto":  # public inputs only: n, p, declared classes, budget
            mechanism = auto_mechanism(n, p, epsilon, delta, n_problems)
        if mechanism == "dpsgd":  # delta against the public n (a DeltaTooLargeWarning)
            n_units = n if codes is None else int(codes.max()) + 1  # rows or patients
            self._check_privacy_params(n_samples=n_units, require_delta=math.isfinite(epsilon))
        streams = fit_streams(
            self.random_state,
            ["bounds", "noise", "dpsgd", "groups", "fisher"],
            estimator=self,
            X=X,
            y=y,
            groups=codes,
            # the objective perturbation is a function of the multiset of rows; DP-SGD's
            # Poisson batches and a patient's bounded rows are drawn by row position,
            # so a permuted data set must not reuse its noise stream on other rows
            order_invariant=mechanism != "dpsgd" and codes is None,
        )
        if codes is not None:  # at most k rows per patient, chosen at random
            keep = bound_contributions(codes, k, streams["groups"])
            X, y, codes = X[keep], y[keep], codes[keep]
        lo, hi, eps_bounds = resolve_feature_bounds(self, X, epsilon, streams["bounds"])
        plan = LogisticPlan.build(
            epsilon=epsilon,
            delta=delta,
            eps_bounds=eps_bounds,
            mechanism=mechanism,
            n_problems=n_problems,
            C=self.C,
            max_rows_per_group=k,
            inference=self.inference,
            n_samples=n if codes is None else None,  # public per row (as for "auto")
            n_coords=p + int(bool(self.fit_intercept)),
        )
        Z, ax, cx, scale = _scaled_rows(X, lo, hi, self.fit_intercept)
        units = None if codes is None else (codes, k)
        weights, guarantee = self._fit_problems(Z, scale, y, classes, plan, streams, units)
        return self._record(plan, weights, guarantee, (lo, hi), (ax, cx, scale), p)

    def _validate_input(self, X, y, fit_params):
        """Checked ``(X, y, classes_)``; sets ``classes_`` (declared, or the opt-in)."""
        check_no_fit_params(fit_params, "DPLogisticRegression", "the perturbed objective")
        check_clip_bounds_declared(self.clip, bounds_X=self.bounds_X)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False, order="C")
        check_classification_targets(y)
        self.classes_ = resolve_classes(self, y)
        return X, y, self.classes_

    def _fit_problems(self, Z, scale, y, classes, plan, streams, units=None):
        """The weights of each binary problem (one-vs-rest beyond two classes) on the
        scaled rows ``Z``, and the guarantee of the mechanism that ran; ``units``:
        ``(codes, k)`` of a patient-level DP-SGD fit."""
        weights = np.empty((plan.n_problems, Z.shape[1]))
        self.n_iter_, self.loss_curve_ = 0, np.empty(0)
        guarantee, curves, fisher = "exact", [], []
        private = math.isfinite(plan.epsilon) and not self._nonprivate_options()
        with verbose_handler(self.verbose):
            for k in range(plan.n_problems):
                target = classes[1] if plan.n_problems == 1 else classes[k]
                signs = np.where(y == target, 1.0, -1.0)
                done = float(plan.eps_bounds) + k * plan.eps_problem_spent  # public schedule
                if not plan.dpsgd:
                    weights[k] = self._solve_objective(Z, signs, plan, streams["noise"], k, done)
                    if self.inference:  # after the weights: they are released first
                        fisher.append(release_fisher(Z, signs, weights[k], plan, streams["fisher"]))
                    continue
                # train on the unscaled rows (u, 1); weights on Z = (u, 1) * scale
                v, result = fit_binary_dpsgd(
                    self,
                    Z / scale,
                    signs > 0,
                    plan.eps_problem,
                    plan.delta_problem,
                    streams["dpsgd"],
                    progress=(k, plan.n_problems, done, private),
                    groups=units,
                )
                weights[k] = v / scale
                self.n_iter_ = int(result.n_steps)
                self.noise_multiplier_ = float(result.noise_multiplier)
                guarantee = result.guarantee
                if math.isinf(plan.epsilon):  # non-private: the mean over the problems
                    curves.append(np.asarray(result.history.get("loss", []), dtype=float))
                    self.loss_curve_ = np.mean(curves, axis=0)
        # a refit without inference must not keep the previous fit's Fisher release
        self.__dict__.pop("released_statistics_", None)
        if fisher:
            mle = [m for _, m in fisher]
            self.released_statistics_ = {
                "fisher": np.stack([H for H, _ in fisher]),
                "mle": None if all(m is None for m in mle) else mle,
                "information": plan.information,
            }
        return weights, guarantee

    def _solve_objective(self, Z, signs, plan, rng, k, done):
        """One binary problem by objective perturbation: the exact minimiser of the
        perturbed, regularised objective."""
        b = sample_noise(Z.shape[1], plan.rate, rng)
        # the solver's iteration count and residual gradient depend on the private rows
        # beyond the released minimiser: neither is stored (nor logged)
        w = _solve(Z, signs, plan.ridge, b, tol=self.tol, max_iter=int(self.max_iter))[0]
        log_progress(
            _logger,
            estimator="DPLogisticRegression",
            phase="objective",
            step=k + 1,
            total=plan.n_problems,
            epsilon_spent=done + plan.eps_problem_spent,
        )
        return w

    def _record(self, plan, weights, guarantee, bounds, scaling, p):
        """Write the fitted attributes: the model in original units and the plan's
        facts."""
        ax, cx, scale = scaling
        slope = weights[:, :p] * scale
        self.coef_ = slope * ax
        if self.fit_intercept:
            self.intercept_ = slope @ cx + weights[:, p] * scale
        else:
            self.intercept_ = np.zeros(plan.n_problems)
        check_finite_release(
            [self.coef_, self.intercept_],
            what="the fitted coefficients",
            fix="use a larger epsilon, a larger C or wider bounds_X",
        )
        self.mechanism_ = plan.mechanism
        self.bounds_X_ = bounds
        self.ridge_ = 0.0 if plan.dpsgd else float(plan.ridge)
        self.noise_scale_ = plan.noise_scale(weights.shape[1])
        self.privacy_breakdown_ = plan.breakdown()
        self.privacy_unit_ = "row" if plan.max_rows_per_group is None else "group"
        self.max_rows_per_group_ = plan.max_rows_per_group
        self._record_privacy_spent(plan.epsilon, plan.delta_spent, guarantee=guarantee)
        return self

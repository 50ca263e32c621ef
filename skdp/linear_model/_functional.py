"""DPLinearRegression: least squares from noisy sufficient statistics, with a ridge
chosen from a private estimate of the smallest eigenvalue (AdaSSP, Wang 2018), released
with the Laplace mechanism (pure epsilon, the functional mechanism of Zhang et al. 2012 on
the distinct coefficients) or the analytic Gaussian mechanism (epsilon, delta)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from skdp.base import DPEstimatorMixin
from skdp.linear_model._functional_clip import check_clip, clipped_statistics
from skdp.linear_model._functional_groups import _bounds_and_rows, _check_groups
from skdp.linear_model._functional_plan import FunctionalPlan
from skdp.linear_model._functional_record import record_fit, weighted_sum_sq
from skdp.linear_model._functional_release import (
    _release,
    _release_centre,
    _Scaling,
    _solve,
    _statistics,
    _validate_input,
)
from skdp.linear_model._inference import LinearInferenceMixin
from skdp.utils._deprecation import RenamedAttribute
from skdp.utils._docstrings import insert_docs
from skdp.utils._keyword_init import keyword_init
from skdp.utils._random import fit_streams
from skdp.utils._rowsum import n_rows
from skdp.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
)
from skdp.utils.validation import validate_data

__all__ = ["DPLinearRegression"]


def _bounds_param():
    return [None, StrOptions({"data", "private"}), tuple, list, np.ndarray]


@insert_docs
class DPLinearRegression(LinearInferenceMixin, DPEstimatorMixin, RegressorMixin, BaseEstimator):
    """Differentially private least-squares linear regression (noisy sufficient statistics).

    The data are clipped and scaled to ``[-1, 1]`` with public bounds; the distinct
    entries of ``X~^T X~`` and ``X~^T y~`` (the coefficients of the least-squares
    objective, with ``X~`` holding a column of ones for the intercept) are released
    once with noise, and the noisy objective plus a ridge is minimised in closed form.
    By default the ridge is chosen from a private estimate of the smallest eigenvalue
    of ``X~^T X~`` (AdaSSP, Wang 2018): none when the data dominate the noise, enough
    to keep the noisy matrix well inside the positive definite cone when they do not.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy loss of one ``fit`` (including a private bound estimate, if any).
        ``math.inf`` gives ordinary least squares on the clipped data.
    delta : float, default=1e-5
        The ``delta`` the Gaussian release may spend (keep it well below ``1 / n``).
        With ``mechanism="auto"`` a ``delta`` with ``0 < delta < 1 / n`` lets the public
        rule pick the Gaussian release where its noise is smaller (on small, wide
        tables it usually is); otherwise the pure Laplace release runs and spends no
        ``delta`` (``delta_spent_ = 0``). ``delta=0``: pure ``epsilon``-DP.
        ``mechanism="gaussian"`` needs ``delta > 0``. The default is the same ``1e-5``
        as :class:`DPLogisticRegression` and skdp's other ``(epsilon, delta)``
        estimators (:ref:`benchmarks-linear-regression-small` measures the choice). A
        model selection or ledger plans with the declared ``delta`` before the
        mechanism is known.
    bounds_X : None, "private", "data", (lo, hi) of scalars or per-feature arrays, or dict, \
default=None
        Public bounds of the features (a dict ``{column: (lo, hi)}`` for a DataFrame).
        ``None``: a private estimate spending 10 % of ``epsilon``
        (:func:`skdp.mechanisms.resolve_bounds`; the rest goes to the regression) where
        it can be reliable by public quantities (``n``, the number of estimated columns,
        ``epsilon``); otherwise ``fit`` refuses with a ``ValueError`` that says what to
        declare (:doc:`/choosing_bounds`). ``"private"``: the explicit opt-in to that
        estimate even where it cannot be reliable (with a
        :class:`~skdp.exceptions.BoundsEstimateWarning`). ``"data"``: the non-private
        opt-in, which emits
        :class:`~skdp.exceptions.PrivacyLeakWarning`. Declared bounds must be finite,
        within ``+-1e150`` and at least ``1e-150`` wide
        (:func:`skdp.utils.validation.check_bounds`); a fit whose coefficients overflow
        raises ``ValueError`` instead of returning NaN/inf.
    bounds_y : None, "private", "data" or (lo, hi), default=None
        Public bounds of the target, as for ``bounds_X``. When both are estimated a
        single private estimate covers them (10 % of ``epsilon`` in total), refused
        unless reliable or both are ``"private"``.
    fit_intercept : bool, default=True
        Fit an intercept. Features and target are mapped affinely onto ``[-1, 1]``.
        With ``False`` they are divided by their largest absolute bound instead, so that
        the model stays linear through the origin in original units.
    clip : bool, default=True
        Clip values to the bounds (silently). ``False`` raises ``ValueError`` naming
        the column when a value lies outside them; it needs declared bounds (with a
        private estimate the refusal would depend on the data).
    mechanism : {"auto", "functional", "gaussian"}, default="auto"
        ``"functional"``: pure ``epsilon``-DP, Laplace noise on the statistics (and on
        the smallest eigenvalue). ``"gaussian"``: ``(epsilon, delta)``-DP, Gaussian
        noise calibrated to the joint L2 sensitivity with the analytic Gaussian
        mechanism (:func:`skdp.mechanisms.gaussian_sigma`); less noise when ``d`` is
        large, more when ``n epsilon`` is small (see the Notes). ``"auto"``:
        ``"functional"`` unless ``0 < delta < 1 / n`` (or with ``secure_mode``), otherwise the one
        whose noise on one entry of ``X~^T X~`` is smaller, a public rule of ``p``,
        the budget of the statistics and ``delta`` (``mechanism_`` says which ran).
    regularization : "adaptive", "zhang" or float, default="adaptive"
        Ridge added to the diagonal of the noisy ``X~^T X~`` (in the scaled space).
        ``"adaptive"``: chosen from a private smallest eigenvalue, which costs 5 % of
        the budget left after the bounds (Notes). ``"zhang"``: the constant of Zhang et
        al., five standard deviations of the noise of one entry (``5 sqrt(2)
        noise_scale_["objective"]`` for Laplace, ``5 noise_scale_["objective"]`` for
        Gaussian noise), whatever ``n``. A float is used as is (``0.0`` allowed). With
        ``"zhang"`` or a float the whole budget goes to the statistics and directions
        of the noisy quadratic with an eigenvalue below ``1e-8`` are dropped.
    secure_mode : bool, default=False
        ``False``: floating-point noise (``rng.laplace``/``rng.normal``), reproducible
        with ``random_state`` but exposed to the attack of Mironov (2012). ``True``
        (Laplace only): the statistics and the eigenvalue are released with the
        floating-point-safe grid mechanism of :func:`skdp.mechanisms.add_laplace`
        (``secure_mode=True``): every value is rounded to a power-of-two grid
        ``Λ <= 2^-10 sensitivity / size`` and receives exact integer discrete Laplace
        noise (Canonne, Kamath & Steinke 2020) drawn from ``os.urandom``, so the
        releases are exact multiples of ``Λ``. The noise is then not reproducible, and
        its scale exceeds the floating-point one by less than 0.1 %. A private bound
        estimate (``bounds_X``/``bounds_y`` ``None``) still draws its noise in
        floating point from ``random_state``. ``mechanism="gaussian"`` with
        ``secure_mode=True`` raises ``ValueError``.
    max_rows_per_group : int or None, default=None
        The public number of rows one patient may contribute when ``fit`` gets
        ``groups`` (from the visit schedule or the study protocol, never from the
        data): a patient's rows count at most that many times (``contribution``) and
        every sensitivity is that many times the row's, so ``epsilon`` holds per
        patient. Required with ``groups``.
    contribution : {"weight", "sample", "clip"}, default="weight"
        How a patient with more than ``k = max_rows_per_group`` rows is bounded (with
        ``groups``; ignored without: the row-level fit, except that ``"sample"`` or
        ``"clip"``, like any parameter away from its default, is part of a seed's
        material). ``"weight"``: every row is
        used, each row of a patient with ``n_p`` rows weighted by ``k / n_p`` in every
        statistic (the expected statistics of ``"sample"`` without its sampling
        variance). ``"sample"``: ``k`` of the patient's rows chosen uniformly at random,
        the others dropped (the rule before ``"weight"``). The same sensitivities and
        noise either way (Notes). ``"clip"`` (opt-in): every row at weight 1, each
        patient's summed statistics (the count included) scaled down to at most ``k``
        rows' norm; the count is released with the statistics' noise instead of being
        public (Notes). A public rule: ``"clip"`` where ``k`` is below the typical
        number ``m`` of rows a patient has by the study design and the slopes are
        released (``(n / k) epsilon > 25 d'``); ``"weight"`` where ``k >= m``
        (``benchmarks/patient_level.py``, 20 seeds, the same noise: +0.006 to +0.18 of
        test R^2 at ``k < m``, -0.012 to +0.002 at ``k >= m``). Not with Dask input,
        ``inference=True``, :meth:`conf_int` or :meth:`summary` (they need a public count).
    inference : bool, default=False
        ``coef_`` and ``intercept_`` are the centre of the :meth:`conf_int` interval:
        the released estimate corrected for the ridge's shrinkage through the
        mechanism's mean map (post-processing: the same releases and budget, the
        released estimate kept in ``released_coef_``). ``False``: the released estimate
        itself, every release unchanged (:doc:`/inference`).
    random_state : None, int, Generator or SeedSequence, default=None
        Seed of the noise (of the private bound estimate only, with ``secure_mode``).
        ``None`` draws fresh OS entropy. Keep it secret for a real release: the seed
        lets anyone subtract the noise.

    Attributes
    ----------
    mechanism_ : str
        The release that ran (``"functional"`` or ``"gaussian"``).
    target_centre_ : float or None
        The private mean of the clipped target (original units) on which the
        statistics were centred; ``None`` without an intercept.
    coef_ : ndarray of shape (n_features,)
        Weights in original units.
    intercept_ : float
        Intercept in original units (0.0 when ``fit_intercept=False``).
    released_coef_, released_intercept_ : ndarray, float or None
        ``inference=True`` only: the released estimate behind the corrected ``coef_``.
    bounds_X_ : tuple of two ndarrays of shape (n_features,)
        The (declared or privately estimated) feature bounds used.
    bounds_y_ : tuple of two floats
        The target bounds used.
    target_weight_ : float
        Weight ``w`` of ``X~^T y~`` in the released vector (Notes).
    sensitivity_ : float
        Sensitivity of the released statistics: L1 ``d'(d'+1)/2 - 1 + w d'`` for the
        Laplace release, L2 ``sqrt(d'(d'+1)/2 - 1 + w^2 d')`` for the Gaussian one,
        ``d' = p + 1`` (without intercept ``p(p+1)/2 + w p`` and
        ``sqrt(p(p+1)/2 + w^2 p)``).
    noise_scale_ : dict of str to float
        The noise of each release, keyed like ``privacy_breakdown_`` (scaled units;
        0 where nothing was released or the fit is non-private):

        * ``"objective"``: noise of one released entry of ``X~^T X~``, the Laplace
          scale (``sensitivity_ / epsilon_objective``; standard deviation ``sqrt(2)``
          times it) or the Gaussian standard deviation; the entries of ``X~^T y~`` get
          it divided by ``target_weight_``. With ``secure_mode`` the scale of the
          discrete Laplace noise, ``D Λ / epsilon'``
          (:func:`skdp.mechanisms._discrete.grid_laplace`); ``nan`` when only the
          target's mean was released;
        * ``"eigenvalue"``: Laplace scale or Gaussian standard deviation of the
          smallest eigenvalue's noise (0 when ``regularization`` is not
          ``"adaptive"``);
        * ``"centre"``: Laplace scale of the target's mean and variance (0 without an
          intercept).

        ``eigenvalue_noise_scale_`` and ``centre_noise_scale_`` are deprecated names of
        the last two (removed in 0.2).
    eigenvalue_sensitivity_ : float
        ``d'``, the sensitivity of the smallest eigenvalue of ``X~^T X~``.
    min_eigenvalue_ : float or None
        The released eigenvalue after the downward shift and the floor at 0
        (``None`` when not released).
    regularization_ : float
        The ridge actually added.
    n_components_ : int
        Eigen-directions of the noisy quadratic form kept after spectral trimming.
    epsilon_spent_, delta_spent_ : float
        ``epsilon``, and ``delta`` when the Gaussian release ran (0 otherwise).
    privacy_guarantee_ : str
        ``"exact"``.
    {attr_patient_facts}
    released_statistics_ : dict
        The noisy statistics as released (scaled units: ``"gram"``, ``"target"``, the
        private ``"target_variance"``, the public ``"n"``, with ``contribution="clip"``
        the released count, at least 1, ``None`` without an intercept; ``"target_sum_sq"`` only at
        ``epsilon=inf``), read by :meth:`conf_int` and :meth:`summary`
        (:doc:`/inference`); ``"gram"`` and ``"target"`` are ``None`` when only the
        target's mean was released.
    privacy_breakdown_ : dict
        Epsilon of ``"bounds"``, ``"centre"`` (the target's private mean and
        variance), ``"eigenvalue"`` and ``"objective"`` (the statistics); sums to
        ``epsilon_spent_``. For the Gaussian mechanism the part
        after the bounds is one Gaussian mechanism, attributed in proportion to the
        shares of ``mu^2`` (Notes).
    {attr_features_in}

    Notes
    -----
    **Privacy.** Neighbouring relation: add or remove one row, ``n`` public
    (:ref:`neighbouring-relation`); with ``groups``, add or remove one patient with all
    their rows: with ``contribution="weight"`` every row of a patient with ``n_p`` rows
    enters every sum below with the weight ``w_p = min(1, k / n_p)``, ``k =
    max_rows_per_group``, so a patient's total weight is ``min(n_p, k) <= k`` and ``w_p``
    depends on that patient's rows alone (adding or removing a patient leaves the other
    weights as they were; :mod:`skdp.linear_model._functional_weights`); with ``"sample"``
    each patient keeps at most ``k`` rows, chosen uniformly at random inside the
    mechanism; with ``"clip"`` the centre release below is weighted as with ``"weight"``
    and the statistics take every row, patient ``p``'s summed terms ``S_p`` (the count
    ``n_p`` in the corner included) scaled by ``c_p = min(1, k R / ||S_p||, k d' /
    tr_p)``, ``R`` the norm of one row's terms (``d'(d'+1)/2 + w d'`` in L1), ``tr_p`` the
    trace of the patient's Gram matrix: ``c_p`` reads that patient's rows alone, so a
    patient moves the released vector by ``c_p ||S_p|| <= k R`` and the eigenvalue by at
    most ``c_p tr_p <= k d'``; the count ``sum_p c_p n_p`` gets the statistics' noise,
    clamped to at least 1 and read wherever the statistics' count is
    (:mod:`skdp.linear_model._functional_clip`). ``n = sum_p min(n_p, k)`` (the weights'
    sum, or the rows kept) is public as the row count is, and every sensitivity below
    (the statistics', the eigenvalue's, the centre's) is ``k`` times the stated one: each
    is a sum of per-row terms and a patient's terms weigh at most ``k`` in total (triangle
    inequality; Weyl for the eigenvalue;
    :func:`skdp.mechanisms.sensitivity.group_sensitivity`); the noise is calibrated to
    those, so the same accountant gives ``epsilon`` per patient. Each row is clipped to the
    bounds and scaled into ``[-1, 1]``; ``x~`` is the scaled feature row followed (with an
    intercept) by a constant 1, so ``||x~||^2 <= d' = p + 1`` (``p`` without intercept), and
    ``|y~| <= 1``. ``epsilon_b`` (10 % of ``epsilon``) goes to a private bound estimate when
    bounds are missing, 0 otherwise (with ``groups``: on at most ``k`` rows of each patient
    chosen at random, the queries calibrated to ``epsilon_b / k``,
    :func:`skdp.mechanisms.resolve_bounds`). With an
    intercept a first release centres the target:
    ``epsilon_c = s epsilon_r`` with the public share ``s = min(1, max(0.05, 50 / (n
    epsilon_r)))`` (``epsilon_r = epsilon - epsilon_b``) buys Laplace noise of scale ``1.5 /
    epsilon_c`` on ``(sum y~, sum (y~^2 - 1/2))``, whose L1 sensitivity is ``3/2``
    (:func:`skdp.mechanisms.sensitivity.target_moments_sensitivity`, attained at ``|y~| =
    1``). Their post-processing gives the private mean ``m`` (clipped to ``[-1, 1]``) and
    variance ``v``. When ``s = 1`` (``n epsilon_r <= 50``) nothing else is released and the
    model is the private mean (``coef_ = 0``). With ``groups`` both rules read ``n / k``
    for ``n`` (rows per unit of sensitivity), and ``s = 1`` also when ``(n / k) epsilon_r
    <= 25 d'`` (:ref:`benchmarks-patient-level`). Otherwise the target in the statistics below
    is ``u = clip(y~ - m, -1, 1)`` instead of ``y~`` (so ``|u| <= 1`` and every sensitivity
    below holds as stated; values more than a half-width of ``bounds_y`` above or below the
    private mean are clipped), and ``epsilon_r`` below stands for ``epsilon_r - epsilon_c``.
    Two statistics are released:

    * the smallest eigenvalue ``lambda_min`` of ``X~^T X~`` (only with
      ``regularization="adaptive"``). Adding a row adds ``x~ x~^T``, which by Weyl's
      inequality raises every eigenvalue by between 0 and ``||x~||^2``, so the
      sensitivity is ``d'`` (tight;
      :func:`skdp.mechanisms.sensitivity.gram_min_eigenvalue_sensitivity`), not 1;
    * the vector ``s`` = (the upper triangle of ``X~^T X~``, diagonal included,
      without the public corner ``n``; then ``w X~^T y~``). A row changes ``s`` by its
      own terms: at most ``Delta_1 = d'(d'+1)/2 - 1 + w d'`` in L1 and
      ``Delta_2 = sqrt(d'(d'+1)/2 - 1 + w^2 d')`` in L2, both attained at a corner of
      the box (:func:`skdp.mechanisms.sensitivity.sufficient_statistics_sensitivity`).
      These are the coefficients of the least-squares objective ``sum (y~ - x~ . b)^2``
      (the functional mechanism's polynomial), each distinct one released once: Zhang
      et al.'s release of all ``d'^2 + d'`` coefficients of the symmetric form has L1
      sensitivity ``d'^2 + 2 d'``, about twice as large.

    *mechanism="functional"* (pure DP): with ``epsilon_r = epsilon - epsilon_b``, the
    eigenvalue gets Laplace noise of scale ``d' / epsilon_e`` with ``epsilon_e = 0.05
    epsilon_r`` and every coordinate of ``s`` Laplace noise of scale ``Delta_1 /
    epsilon_s`` with ``epsilon_s = epsilon_r - epsilon_e`` (``epsilon_e = 0`` without
    the eigenvalue). Each is pure DP by the Laplace mechanism; the accountant is
    sequential composition: ``epsilon_b + epsilon_c + epsilon_e + epsilon_s =
    epsilon``,
    ``delta = 0``, ``privacy_guarantee_ = "exact"``.

    *mechanism="gaussian"* (approximate DP): ``mu = 1 / sigma(1, epsilon_r, delta)``
    with ``sigma`` the analytic Gaussian calibration (Balle & Wang 2018,
    :func:`skdp.mechanisms.gaussian_sigma`). The eigenvalue gets Gaussian noise of
    standard deviation ``d' / mu_e`` and ``s`` of ``Delta_2 / mu_s``, with ``mu_e^2 =
    0.05 mu^2`` and ``mu_s^2 = 0.95 mu^2``. Together they are one Gaussian mechanism
    with unit noise on ``(lambda_min / sigma_e, s / sigma_s)``, whose L2 sensitivity is
    at most ``sqrt(mu_e^2 + mu_s^2) = mu``, hence exactly ``(epsilon_r, delta)``-DP
    (Balle & Wang 2018, Thm 8); with the bound estimate, sequential composition gives
    ``(epsilon, delta)`` (the centre release is a pure ``epsilon_c``-DP Laplace
    release composed before it). ``privacy_breakdown_`` splits ``epsilon_r`` as ``mu^2``
    is split (the convention of :class:`~skdp.synthesis.DPMarginalSynthesizer`).

    Everything after the two releases is post-processing and reads no private value:
    ``X~^T X~`` is rebuilt from ``s`` (the corner is the public ``n``), the eigenvalue
    estimate is shifted down by the ``1 - 0.05`` quantile ``t`` of its noise (``scale
    ln 10`` for Laplace noise, ``1.645 sd`` for Gaussian) and floored at 0,
    ``lambda~ = max(lambda_min + noise - t, 0)``, so it exceeds ``lambda_min`` with
    probability at most 0.05; the ridge is

        ``lambda = max(0, c d' sigma_E^2 / max(lambda~, sigma_E), 3 sigma_E - lambda_min(A))``,

    with ``A`` the noisy ``X~^T X~``, ``sigma_E`` the standard deviation of one noisy
    entry and ``c = 1/2``. The first term balances bias against noise in one
    direction: with noise of variance ``s^2`` on the normal equations and a coefficient
    ``b_j`` in a direction of eigenvalue ``g``, the squared error ``(lambda^2 b_j^2 +
    s^2) / (g + lambda)^2`` is smallest at ``lambda = s^2 / (b_j^2 g)``; with ``g =
    lambda~`` and public nominal values (``||b||^2 = 1/4`` spread over ``d'``
    directions, ``s^2 = sigma_E^2 (1 / w^2 + ||b||^2)``) this is ``c d' sigma_E^2 /
    lambda~`` with ``c`` about 2. ``c = 1/2`` was the best of 1/2, 1 and 2 on the
    simulators of ``benchmarks/linear_regression.py`` (the shifted ``lambda~``
    underestimates ``g``, which a smaller ``c`` offsets); it replaced AdaSSP's ``B -
    lambda~`` (``B`` about the spectral edge of the noise), whose ridge was most of
    the eigenvalue whenever the shift was (``n = 5,000`` rows filling a quarter of the
    box). The first term is 0 in the limit where the data dominate the noise and at
    most ``c d' sigma_E`` when the signal is below the noise. The last term holds
    whatever the noise: the regularised noisy matrix has smallest eigenvalue at least
    ``3 sigma_E > 0``, so it is never indefinite and the solve is
    stable. With the centring, ``c`` is multiplied by ``((1/w^2 + B) / B) / ((1/w^2
    + 1/4) / (1/4))`` with ``B = v / (2 v_x)``, ``v_x`` the mean variance of the scaled
    features read off the noisy statistics: the nominal ``||b||^2 = 1/4`` replaced by
    one that follows the private spread of the target, so that a target that spreads
    over a small part of ``bounds_y`` (a skewed count) gets a larger ridge; the
    intercept's ridge shrinks towards the private mean ``m`` (``u = 0``), not the
    middle of ``bounds_y``. The target weight ``w = (4 T / d')^(1/3)`` (``^(1/4)`` for
    Gaussian noise;
    ``T`` the number of released Gram entries) minimises the noise of the normal
    equations ``sigma_b^2 + sigma_G^2 ||b||^2`` for scaled coefficients of squared
    norm ``||b||^2 = 1/4``. The fitted model stores no un-noised statistic. A
    replacement is a removal plus an addition: for a replace-one guarantee fit the
    Laplace release with ``epsilon / 2`` (:ref:`neighbouring-relation`). Sample weights
    are rejected: they would change the sensitivity.

    **Floating point.** With ``secure_mode=True`` both Laplace releases are exact
    multiples of a power-of-two grid plus exact integer discrete Laplace noise, so the
    guarantee holds in floating point (Mironov 2012 does not apply); everything after
    the releases is post-processing. With the default ``secure_mode=False`` the noise
    is drawn in floating point, as it always is for ``mechanism="gaussian"`` and for
    the private bound estimate (sparse vector, ``bounds_X``/``bounds_y`` ``None``):
    the guarantee is then for the mathematical mechanism. The statistics are summed in
    fixed point: each scaled value is rounded to the grid ``2^-39`` (monotone, so
    ``|x~_j| <= 1`` and the sensitivities above still hold) and the products are added
    exactly in integers, so the sum does not depend on the order or the chunking of the
    rows (in memory or over Dask partitions, :doc:`/dask`); it differs from a float64
    sum of the unrounded values by at most ``n 2^-38`` per entry.

    **Accuracy.** ``benchmarks/linear_regression.py`` compares the defaults with
    ordinary least squares, the previous default (all ``d'^2 + d'`` coefficients, ridge
    ``5 sqrt(2) Delta / epsilon``) and diffprivlib over 20 seeds and 90 settings
    (simulators with ``n`` 1,000-20,000, ``d`` 1-10, and public data, ``epsilon`` 1 and
    0.1). The default's median test R^2 is above the previous default's in 83 of them
    (e.g. 9,000 rows, 3 features, OLS 0.986: 0.978 against 0.905 at ``epsilon=1``, 0.658
    against 0.347 at ``epsilon=0.1``; the lower ones are ``n = 1000``, ``epsilon = 0.1``
    rows with R^2 near 0 either way); the Gaussian release (``delta = 1/n^2``) beats the
    Laplace release (the default then) in 52 (mostly ``d >= 5``), never at ``d = 1``. The noise of
    ``X~^T X~`` grows like ``d'^2 / epsilon`` (Laplace) or ``d' sqrt(log(1/delta)) /
    epsilon`` (Gaussian) while the signal grows like ``n`` times the variance of the
    scaled features: the model is close to least squares when ``n`` is large and the
    features fill a good part of their declared box, and shrinks towards the private
    mean of the target otherwise. On small tables (100-3,600 rows, 3-11 features,
    ``benchmarks/linear_regression_small.py``, :ref:`benchmarks-linear-regression-small`)
    the centring removed the failures of the previous default on skewed targets
    (median test R^2 from -3.6 to -0.08 on a simulated count declared 0-14, 400 rows,
    epsilon = 1), and the default ``delta = 1e-5`` lets ``"auto"`` use the Gaussian
    release where it is better (diabetes, 331 rows, epsilon = 3: 0.24 against 0.10
    with ``delta = 0``); but where the regression line happens to pass near the middle
    of the declared box the previous shrinkage towards that middle was a good guess and
    the centred fit is lower (Fair's affairs survey, 300 rows, epsilon = 3: 0.53
    against 0.69), and at ``n epsilon`` of a few hundred or less the fit can be a few
    hundredths of R^2 below the private mean alone.

    References
    ----------
    J. Zhang, Z. Zhang, X. Xiao, Y. Yang, M. Winslett. "Functional mechanism:
    regression analysis under differential privacy." PVLDB 5(11), 2012.

    Y.-X. Wang. "Revisiting differentially private linear regression: optimal and
    adaptive prediction & estimation in unbounded domain." UAI 2018.

    B. Balle, Y.-X. Wang. "Improving the Gaussian mechanism for differential privacy:
    analytical calibration and optimal denoising." ICML 2018.

    E. Lantz. "Machine learning for risk prediction and privacy in electronic health
    records." PhD thesis, University of Wisconsin-Madison, 2016, §5.4.2.

    {refs_floating_point}

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model import DPLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 2))
    >>> y = X @ [0.5, -0.3] + 0.1 + rng.normal(0, 0.05, size=20000)
    >>> reg = DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-1.5, 1.5),
    ...                          random_state=0).fit(X, y)
    >>> reg.epsilon_spent_, sorted(reg.privacy_breakdown_)
    (1.0, ['bounds', 'centre', 'eigenvalue', 'objective'])
    >>> bool(np.all(np.abs(reg.coef_ - [0.5, -0.3]) < 0.05))
    True
    """

    _parameter_constraints: dict = {
        "epsilon": DPEstimatorMixin._privacy_parameter_constraints["epsilon"],
        "delta": DPEstimatorMixin._privacy_parameter_constraints["delta"],
        "bounds_X": _bounds_param() + [dict],
        "bounds_y": _bounds_param(),
        "fit_intercept": ["boolean"],
        "clip": ["boolean"],
        "mechanism": [StrOptions({"auto", "functional", "gaussian"})],
        "regularization": [
            StrOptions({"adaptive", "zhang"}),
            Interval(Real, 0, None, closed="left"),
        ],
        "secure_mode": ["boolean"],
        "max_rows_per_group": [None, Interval(Integral, 1, None, closed="left")],
        "contribution": [StrOptions({"weight", "sample", "clip"})],
        "inference": ["boolean"],
        **DPEstimatorMixin._common_constraints("random_state"),
    }

    # deprecated names of noise_scale_ entries (removed in 0.2)
    eigenvalue_noise_scale_ = RenamedAttribute("noise_scale_", key="eigenvalue")
    centre_noise_scale_ = RenamedAttribute("noise_scale_", key="centre")

    __init__ = keyword_init(
        [
            ("epsilon", 1.0),
            ("delta", 1e-5),
            ("bounds_X", None),
            ("bounds_y", None),
            ("fit_intercept", True),
            ("clip", True),
            ("mechanism", "auto"),
            ("regularization", "adaptive"),
            ("secure_mode", False),
            ("max_rows_per_group", None),
            ("contribution", "weight"),
            ("inference", False),
            ("random_state", None),
        ],
        qualname="DPLinearRegression.__init__",
    )
    # out of the seed material at these values (the releases before them unchanged)
    _later_parameters = {"inference": False, "contribution": "weight"}

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, groups=None, **fit_params):
        """Fit the private linear model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Or a Dask array/DataFrame: the statistics are summed partition by partition
            with the same release (:doc:`/dask`; ``bounds_X`` and ``bounds_y`` must be
            declared).
        y : array-like of shape (n_samples,)
            In memory, or a Dask array/Series aligned with ``X``.
        groups : array-like of shape (n_samples,), default=None
            The patient (or other privacy unit) of each row, as in scikit-learn's
            ``GroupKFold``. With ``groups`` the guarantee is per patient: each patient
            counts at most ``max_rows_per_group`` rows (``contribution``) and every
            sensitivity is that many times the row's (Notes). A Dask array or Series
            with Dask ``X``: bounded on the workers (:doc:`/dask`).
        **fit_params : dict
            Only ``sample_weight=None`` is accepted; weights are rejected.

        Returns
        -------
        self
        """
        X, y, dask_input = _validate_input(self, X, y, fit_params)
        n, p = (n_rows(X) if dask_input else X.shape[0]), X.shape[1]
        codes, k = _check_groups(self, groups, n, dask_input)
        check_clip(self, codes, dask_input)
        # the rows' count (public): with groups it exceeds the patients', so the rule
        # delta < 1 / n is the stricter one and reads no count of patients
        epsilon, delta = self._check_budget(n)
        streams = fit_streams(
            self.random_state,
            ["bounds", "noise", "eigenvalue", "centre", "groups"],
            estimator=self,
            X=X,
            y=y,
            groups=codes,
            # in memory the bounded subset depends on the row order: a permuted copy
            # must not reuse the noise on other rows (on Dask it does not)
            order_invariant=codes is None or dask_input,
        )
        columns = list(getattr(self, "feature_names_in_", range(p)))
        # the bounds (estimated per patient on at most k rows of each) and every row
        # weighted min(1, k / n_p) or at most k rows per patient chosen at random
        # (with clip=False every row is checked first)
        X, y, n, (lo, hi, ylo, yhi), eps_bounds, weights = _bounds_and_rows(
            self, X, y, epsilon, streams, columns, (codes, k), dask_input
        )
        scaling = _Scaling.build(lo, hi, ylo, yhi, fit_intercept=self.fit_intercept)
        plan = FunctionalPlan.build(
            n=n,
            p=p,
            epsilon=epsilon,
            delta=delta,
            eps_bounds=eps_bounds,
            fit_intercept=self.fit_intercept,
            mechanism=self.mechanism,
            adaptive=self.regularization == "adaptive",
            secure_mode=self.secure_mode,
            max_rows_per_group=k,
            contribution=self.contribution,
        )
        centre = _release_centre(
            X, y, scaling, plan, streams["centre"], columns, self.clip, weights
        )
        if plan.mean_only:  # n epsilon too small for slopes: the private mean
            return self._record(plan, scaling, centre, model=None)
        if plan.contribution == "clip":  # each patient's summed statistics clipped
            stats = clipped_statistics(X, y, scaling, centre, plan, columns, self.clip, codes)
        else:
            stats = _statistics(X, y, scaling, centre, plan, columns, self.clip, weights)
        rel = _release(*stats, plan, streams)
        # epsilon=inf only: the exact sum of squares of the target
        rel = weighted_sum_sq(rel, plan, X, y, scaling, columns, self.clip, weights)
        return self._record(
            plan, scaling, centre, model=_solve(rel, plan, centre, self.regularization)
        )

    def _check_budget(self, n):
        """``(epsilon, delta)``, with ``delta = 0`` where the Gaussian release may not
        run. ``"auto"`` may spend ``delta`` only where it is a meaningful promise (``0 <
        delta < 1 / n``, a public rule of ``n``); otherwise it runs the pure Laplace
        release without a warning."""
        may_use_delta = self.mechanism == "gaussian" or (
            self.mechanism == "auto"
            and not self.secure_mode
            and isinstance(self.delta, Real)
            and 0.0 < self.delta < 1.0 / max(n, 1)
        )
        epsilon, delta = self._check_privacy_params(
            n_samples=n if may_use_delta else None,
            require_delta=self.mechanism == "gaussian",
        )
        return epsilon, (delta if may_use_delta else 0.0)

    def _record(self, plan, scaling, centre, model):
        """Write the fitted attributes: the model in original units and the plan's facts
        (``model`` is ``(w, ridge, n_kept, releases)``, or ``None`` for the mean only)."""
        return record_fit(self, plan, scaling, centre, model)

    # -------------------------------------------------------------- predict
    def predict(self, X):
        """Predict with the private linear model: ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_

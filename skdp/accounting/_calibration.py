"""Pure functions over the accountants: the epsilon of a DP-SGD run and noise calibration.

:func:`compute_epsilon`, :func:`calibrate_noise_multiplier` (bisection, rounded up:
never under-noised) and :func:`resolve_noise_multiplier`, the rule every DP-SGD
estimator applies before training.
"""

from __future__ import annotations

import math
import warnings

from skdp.accounting._accountant import (
    _GDP_WARNING,
    PLDAccountant,
    _gdp_epsilon_checked,
    get_accountant,
)
from skdp.accounting._gdp import (
    gdp_clt_noise_multiplier,
    gdp_mu,
)
from skdp.accounting._rdp import (
    _check_real,
    _check_steps,
)
from skdp.exceptions import ApproximateGuaranteeWarning, BudgetExceededError
from skdp.utils._docstrings import insert_docs

#: Calibration bracket and stopping ratio of :func:`calibrate_noise_multiplier` (the
#: smallest sigma in the bracket, rounded up; see :doc:`/composition`).
SIGMA_MIN = 0.3
SIGMA_MAX = 1000.0
SIGMA_RATIO = 1.001


def _rdp_only_options(accountant, orders, conversion):
    if accountant == "rdp":
        return {"orders": orders, "conversion": conversion}
    if orders is not None or conversion != "improved":
        raise ValueError("orders and conversion apply only to accountant='rdp'.")
    return {}


@insert_docs
def compute_epsilon(
    *,
    noise_multiplier,
    sample_rate,
    steps,
    delta,
    accountant="rdp",
    orders=None,
    conversion="improved",
):
    """Epsilon of ``steps`` Poisson-subsampled Gaussian steps at ``delta``.

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation over the L2 sensitivity (``sigma``), >= 0.
    sample_rate : float
        Poisson sampling probability ``q`` in ``[0, 1]`` (``q = 1``: full batch).
    steps : int
        Number of steps ``T`` >= 0. ``q = 0`` or ``T = 0`` gives ``0.0``.
    delta : float
        Target delta in ``[0, 1)``; ``0`` gives ``inf`` for any real step.
    accountant : str, default="rdp"
        Registry key, see :func:`available_accountants`.
    orders : array-like of float, optional
        ``"rdp"`` only: Rényi orders (default :data:`~skdp.accounting.DEFAULT_ORDERS`).
    conversion : {"improved", "classic"}, default="improved"
        ``"rdp"`` only: RDP -> (epsilon, delta) conversion.

    Returns
    -------
    epsilon : float

    Notes
    -----
    Add/remove-one-row neighbours, ``n`` public. ``"rdp"`` is a proven upper bound;
    ``"pld"`` is the smaller of the numerically composed privacy loss distribution
    and ``"rdp"``, also a proven upper bound (see :class:`PLDAccountant`);
    ``"gdp_clt"`` is approximate and emits
    :class:`~skdp.exceptions.ApproximateGuaranteeWarning`.

    References
    ----------
    .. [1] {ref_mironov_talwar_zhang2019}
    .. [2] {ref_balle2020}

    Examples
    --------
    >>> from skdp.accounting import compute_epsilon
    >>> round(compute_epsilon(noise_multiplier=1.5, sample_rate=0.04, steps=2250,
    ...                       delta=1e-5), 3)
    7.329
    """
    acc = get_accountant(accountant, **_rdp_only_options(accountant, orders, conversion))
    acc.step(
        noise_multiplier=noise_multiplier, sample_rate=sample_rate, num_steps=_check_steps(steps)
    )
    if accountant == "gdp_clt":
        warnings.warn(_GDP_WARNING, ApproximateGuaranteeWarning, stacklevel=2)
        return _gdp_epsilon_checked(delta, acc.get_mu())
    return float(acc.get_epsilon(delta))


def calibrate_noise_multiplier(
    *,
    epsilon,
    delta,
    sample_rate,
    steps,
    accountant="rdp",
    orders=None,
    conversion="improved",
):
    """Smallest noise multiplier whose ``steps`` steps at ``sample_rate`` meet (epsilon, delta).

    Bisection (on a log scale) over ``[0.3, 1000]`` until ``hi / lo <= 1.001``;
    returns ``hi``, so ``compute_epsilon(noise_multiplier=result, ...) <= epsilon``
    always holds (rounded up: never under-noised), and the result is within 0.1 % of
    the smallest feasible value.

    Parameters
    ----------
    epsilon : float
        Target epsilon > 0. ``inf`` returns ``0.0`` (no noise: a non-private run).
    delta : float
        Target delta in ``[0, 1)``.
    sample_rate : float
        Poisson sampling probability in ``[0, 1]``.
    steps : int
        Number of steps >= 0.
    accountant : str, default="rdp"
        Registry key.
    orders, conversion
        ``"rdp"`` only, see :func:`compute_epsilon`.

    Returns
    -------
    noise_multiplier : float
        ``0.3`` when even ``0.3`` meets the target (including ``sample_rate == 0`` or
        ``steps == 0``; over-noising is safe).

    Raises
    ------
    BudgetExceededError
        (a ``ValueError``) If even ``noise_multiplier=1000`` exceeds the target (the
        budget is too small for this many steps).
    ValueError
        For invalid arguments.

    Examples
    --------
    >>> from skdp.accounting import calibrate_noise_multiplier, compute_epsilon
    >>> sigma = calibrate_noise_multiplier(epsilon=3.0, delta=1e-5,
    ...                                    sample_rate=256 / 60000, steps=14062)
    >>> compute_epsilon(noise_multiplier=sigma, sample_rate=256 / 60000, steps=14062,
    ...                 delta=1e-5) <= 3.0
    True
    """
    target = _check_real(epsilon, "epsilon", low=0.0, allow_inf=True)
    if target <= 0.0:
        raise ValueError("epsilon must be > 0.")
    options = _rdp_only_options(accountant, orders, conversion)
    get_accountant(accountant, **options)  # validates the key and the options early
    _check_real(delta, "delta", low=0.0, high=1.0)
    _check_real(sample_rate, "sample_rate", low=0.0, high=1.0)
    _check_steps(steps)
    if math.isinf(target):
        return 0.0
    if accountant == "gdp_clt":
        warnings.warn(_GDP_WARNING, ApproximateGuaranteeWarning, stacklevel=2)
    if accountant == "pld":
        return _calibrate_pld(target, delta, sample_rate, steps)

    def eps_at(sigma):
        acc = get_accountant(accountant, **options)
        acc.step(noise_multiplier=sigma, sample_rate=sample_rate, num_steps=steps)
        if accountant == "gdp_clt":
            return _gdp_epsilon_checked(delta, acc.get_mu())
        return acc.get_epsilon(delta)

    if eps_at(SIGMA_MIN) <= target:
        return SIGMA_MIN
    if eps_at(SIGMA_MAX) > target:
        raise _budget_error(target, delta, sample_rate, steps)
    lo, hi = SIGMA_MIN, SIGMA_MAX  # eps(lo) > target >= eps(hi)
    while hi / lo > SIGMA_RATIO:
        mid = math.sqrt(lo * hi)
        if eps_at(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def _budget_error(target, delta, sample_rate, steps):
    return BudgetExceededError(
        f"No noise multiplier in [{SIGMA_MIN}, {SIGMA_MAX}] reaches epsilon={target:g} "
        f"at delta={delta:g} with sample_rate={sample_rate:g} and steps={steps}: "
        "increase epsilon or delta, or use fewer steps or a smaller sample rate."
    )


#: First bracketing factor of the PLD calibration around its initial guess.
_PLD_BRACKET = 1.03


def _calibrate_pld(target, delta, sample_rate, steps):
    """:func:`calibrate_noise_multiplier` for ``"pld"``: the same rule, few compositions.

    Starts from the CLT noise multiplier (Bu et al. 2020; only a guess), brackets the
    answer by stepping by factors ``1.03, 1.061, 1.126, ...``, then bisects geometrically
    until ``hi / lo <= 1.001``, one PLD composition per step, and returns ``hi``. The
    bisection tests the PLD epsilon alone, so ``hi`` meets the target under
    ``min(PLD, RDP)`` too (the PLD is the smaller one wherever it is available; where
    it is not, e.g. a grid too large, the RDP calibration is returned).
    """
    if sample_rate == 0.0 or steps == 0:
        return SIGMA_MIN

    def feasible(sigma):
        acc = PLDAccountant().step(noise_multiplier=sigma, sample_rate=sample_rate, num_steps=steps)
        return acc.get_epsilon_pld(delta) <= target

    def rdp_fallback():
        return calibrate_noise_multiplier(
            epsilon=target, delta=delta, sample_rate=sample_rate, steps=steps, accountant="rdp"
        )

    mu = gdp_mu(target, delta)
    guess = gdp_clt_noise_multiplier(mu=mu, sample_rate=sample_rate, steps=steps)
    guess = min(SIGMA_MAX, max(SIGMA_MIN, guess if math.isfinite(guess) else SIGMA_MAX))
    factor = _PLD_BRACKET
    if feasible(guess):
        lo, hi = bracket_below(feasible, guess, SIGMA_MIN)
        if lo is None:
            return SIGMA_MIN
    else:
        lo = guess
        while True:  # not feasible(lo)
            if lo >= SIGMA_MAX:
                return rdp_fallback()  # raises BudgetExceededError if RDP fails too
            hi = min(SIGMA_MAX, lo * factor)
            if feasible(hi):
                break
            lo, factor = hi, factor * factor
    return geometric_bisection(feasible, lo, hi, SIGMA_RATIO)


def bracket_below(feasible, hi, floor):
    """From a feasible ``hi``, step down by factors ``1.03, 1.061, 1.126, ...`` (each the
    square of the last) until an infeasible ``lo``: ``(lo, hi)`` with ``feasible(hi)``
    and not ``feasible(lo)``, ready for :func:`geometric_bisection`; ``(None, floor)``
    when ``floor`` itself is feasible. One ``feasible`` call per step."""
    factor = _PLD_BRACKET
    while hi > floor:
        lo = max(floor, hi / factor)
        if not feasible(lo):
            return lo, hi
        hi, factor = lo, factor * factor
    return None, floor


def geometric_bisection(feasible, lo, hi, ratio):
    """Bisect ``[lo, hi]`` at geometric midpoints until ``hi / lo <= ratio``; the last ``hi``.

    ``feasible`` must be monotone, true at ``hi`` and false at ``lo`` (``0 < lo < hi``):
    the result is feasible and within a factor ``ratio`` of the smallest feasible value.
    Used to calibrate a noise scale to a privacy budget (here and in
    :func:`skdp.mechanisms.gaussian_sigma`).
    """
    while hi / lo > ratio:  # feasible(hi), not feasible(lo)
        mid = math.sqrt(lo * hi)
        if feasible(mid):
            hi = mid
        else:
            lo = mid
    return hi


def resolve_noise_multiplier(
    *, epsilon, delta, sample_rate, steps, noise_multiplier=None, accountant="rdp"
):
    """The noise multiplier a DP-SGD fit should use, and the epsilon it spends.

    The shared rule of every DP-SGD estimator (see :doc:`/composition`):

    * ``noise_multiplier=None``: calibrate it to ``(epsilon, delta)`` with
      :func:`calibrate_noise_multiplier`; ``epsilon=inf`` gives ``0.0`` (no noise) and
      an ``inf`` spend (a non-private fit).
    * ``noise_multiplier`` given: compute its spend; if it exceeds ``epsilon`` raise
      :class:`~skdp.exceptions.BudgetExceededError` (a ``ValueError``), to be called
      *before* any training.

    Parameters
    ----------
    epsilon : float
        The epsilon available to the DP-SGD steps (> 0, ``inf`` allowed).
    delta : float
        Target delta in ``[0, 1)``.
    sample_rate : float
        Poisson sampling probability in ``[0, 1]``.
    steps : int
        Number of noisy steps the fit will run.
    noise_multiplier : float or None, default=None
        A user-fixed noise multiplier (>= 0), or ``None`` to calibrate.
    accountant : str, default="rdp"
        Registry key.

    Returns
    -------
    noise_multiplier : float
    epsilon_spent : float
        ``compute_epsilon`` at that noise multiplier (``<= epsilon``; ``0.0`` when
        ``sample_rate == 0`` or ``steps == 0``).

    Raises
    ------
    BudgetExceededError
        If no noise multiplier in ``[0.3, 1000]`` reaches ``epsilon``, or the given one
        spends more than ``epsilon``.

    Examples
    --------
    >>> from skdp.accounting import resolve_noise_multiplier
    >>> sigma, spent = resolve_noise_multiplier(epsilon=3.0, delta=1e-5,
    ...                                         sample_rate=0.01, steps=1000)
    >>> round(sigma, 3), spent <= 3.0
    (0.865, True)
    >>> resolve_noise_multiplier(epsilon=1.0, delta=1e-5, sample_rate=0.01, steps=1000,
    ...                          noise_multiplier=0.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    skdp.exceptions.BudgetExceededError: noise_multiplier=0.5 spends epsilon=...
    """
    target = _check_real(epsilon, "epsilon", low=0.0, allow_inf=True)
    if target <= 0.0:
        raise ValueError("epsilon must be > 0.")
    kw = {"delta": delta, "sample_rate": sample_rate, "steps": steps, "accountant": accountant}
    with warnings.catch_warnings():
        # the gdp_clt warning is emitted once below, at the caller's level
        warnings.simplefilter("ignore", ApproximateGuaranteeWarning)
        if noise_multiplier is None:
            sigma = calibrate_noise_multiplier(epsilon=target, **kw)
        else:
            sigma = _check_real(noise_multiplier, "noise_multiplier", low=0.0, allow_inf=True)
        spent = compute_epsilon(noise_multiplier=sigma, **kw)
    if accountant == "gdp_clt":
        warnings.warn(_GDP_WARNING, ApproximateGuaranteeWarning, stacklevel=2)
    if spent > target:
        raise BudgetExceededError(
            f"noise_multiplier={sigma:g} spends epsilon={spent:.6g} at delta={delta:g} over "
            f"{steps} steps with sample_rate={sample_rate:g}, more than epsilon={target:g}: "
            "increase noise_multiplier, or set noise_multiplier=None to calibrate it."
        )
    return sigma, spent

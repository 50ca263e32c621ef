"""Stateful accountants, their string registry, and the pure compute/calibrate functions."""

from __future__ import annotations

import math
import warnings

import numpy as np

from skdp.accounting._gdp import _mu_sq_per_step, gdp_delta, gdp_epsilon
from skdp.accounting._rdp import (
    _check_conversion,
    _check_orders,
    _check_real,
    _check_steps,
    rdp_subsampled_gaussian,
    rdp_to_delta,
    rdp_to_epsilon,
)
from skdp.exceptions import ApproximateGuaranteeWarning, BudgetExceededError

__all__ = [
    "Accountant",
    "GDPCLTAccountant",
    "RDPAccountant",
    "available_accountants",
    "calibrate_noise_multiplier",
    "compute_epsilon",
    "get_accountant",
    "register_accountant",
    "resolve_noise_multiplier",
]

#: Calibration bracket and stopping ratio (spec README §2 row 5).
SIGMA_MIN = 0.3
SIGMA_MAX = 1000.0
SIGMA_RATIO = 1.001

_GDP_WARNING = (
    "The 'gdp_clt' accountant uses the central-limit approximation of Bu et al. (2020): "
    "its epsilon is not a proven bound and can under-state the privacy loss for finite "
    "numbers of steps. Use accountant='rdp' for a rigorous guarantee."
)


class Accountant:
    """Base class: a history of Poisson-subsampled Gaussian steps.

    Subclasses set :attr:`name` and :attr:`guarantee` and implement
    :meth:`get_epsilon`. Create them with :func:`get_accountant`.

    Attributes
    ----------
    history : list of (float, float, int)
        ``(noise_multiplier, sample_rate, num_steps)`` for every call of
        :meth:`step`, run-length encoded: a step with the same noise multiplier and
        sample rate as the last entry increments its count instead of appending
        (so one call per executed DP-SGD step stays small in memory).
    name : str
        The registry key.
    guarantee : {"exact", "approximate"}
        Whether :meth:`get_epsilon` is a proven bound.
    """

    name = None
    guarantee = "exact"

    def __init__(self):
        self.history = []

    def step(self, *, noise_multiplier, sample_rate, num_steps=1):
        """Record ``num_steps`` steps of the Poisson-subsampled Gaussian mechanism.

        Parameters
        ----------
        noise_multiplier : float
            Noise standard deviation over the L2 sensitivity, >= 0 (``inf`` allowed).
        sample_rate : float
            Poisson sampling probability in ``[0, 1]``.
        num_steps : int, default=1
            Number of identical steps, >= 0.

        Returns
        -------
        self
        """
        sigma = _check_real(noise_multiplier, "noise_multiplier", low=0.0, allow_inf=True)
        q = _check_real(sample_rate, "sample_rate", low=0.0, high=1.0)
        n = _check_steps(num_steps, "num_steps")
        if n == 0:
            return self
        if self.history and self.history[-1][:2] == (sigma, q):
            self.history[-1] = (sigma, q, self.history[-1][2] + n)
        else:
            self.history.append((sigma, q, n))
        return self

    @property
    def n_steps(self):
        """Total number of recorded steps."""
        return sum(n for _, _, n in self.history)

    def reset(self):
        """Forget every recorded step; return ``self``."""
        self.history = []
        return self

    def _grouped(self):
        """``{(sigma, q): total steps}`` over the history."""
        groups = {}
        for sigma, q, n in self.history:
            groups[(sigma, q)] = groups.get((sigma, q), 0) + n
        return groups

    def get_epsilon(self, delta):  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}(n_steps={self.n_steps}, history={self.history!r})"


class RDPAccountant(Accountant):
    """Rényi-DP accountant for Poisson-subsampled Gaussian steps (registry key ``"rdp"``).

    Parameters
    ----------
    orders : array-like of float, optional
        Rényi orders (> 1); default :data:`skdp.accounting.DEFAULT_ORDERS`.
    conversion : {"improved", "classic"}, default="improved"
        RDP -> (epsilon, delta) conversion, see :func:`rdp_to_epsilon`.

    Attributes
    ----------
    history : list of (float, float, int)
        See :class:`Accountant`.
    guarantee : str
        ``"exact"``: the result is a proven upper bound.

    Notes
    -----
    Add/remove-one-row neighbours, ``n`` public. Each step is the sampled Gaussian
    mechanism with L2 sensitivity 1 relative to the noise (clipping norm ``C``
    cancels); steps compose by adding RDP curves order by order (Mironov 2017,
    Prop. 1), then the curve is converted once. Exact integer and fractional orders,
    see :func:`rdp_subsampled_gaussian`.

    References
    ----------
    .. [1] I. Mironov, "Rényi Differential Privacy", CSF 2017.
    .. [2] I. Mironov, K. Talwar, L. Zhang, "Rényi Differential Privacy of the Sampled
       Gaussian Mechanism", arXiv:1908.10530, 2019.
    .. [3] B. Balle et al., "Hypothesis Testing Interpretations and Renyi Differential
       Privacy", AISTATS 2020.

    Examples
    --------
    >>> from skdp.accounting import get_accountant
    >>> acc = get_accountant("rdp")
    >>> acc = acc.step(noise_multiplier=1.1, sample_rate=256 / 60000, num_steps=14062)
    >>> round(acc.get_epsilon(1e-5), 3)
    2.597
    """

    name = "rdp"
    guarantee = "exact"

    def __init__(self, *, orders=None, conversion="improved"):
        super().__init__()
        self.orders = _check_orders(orders)
        self.conversion = _check_conversion(conversion)
        self._cache = {}

    def get_rdp(self):
        """The composed RDP curve at :attr:`orders` (``ndarray``)."""
        total = np.zeros_like(self.orders)
        for (sigma, q), n in self._grouped().items():
            key = (sigma, q)
            if key not in self._cache:
                self._cache[key] = rdp_subsampled_gaussian(
                    noise_multiplier=sigma, sample_rate=q, orders=self.orders
                )
            total = total + n * self._cache[key]
        return total

    def get_epsilon_and_order(self, delta):
        """``(epsilon, optimal order)`` for the recorded steps at ``delta``."""
        return rdp_to_epsilon(
            self.get_rdp(), self.orders, delta=delta, conversion=self.conversion, return_order=True
        )

    def get_epsilon(self, delta):
        """Epsilon of the recorded steps at ``delta`` (0 when nothing was recorded)."""
        return self.get_epsilon_and_order(delta)[0]

    def get_delta(self, epsilon):
        """Delta of the recorded steps at ``epsilon``."""
        return rdp_to_delta(
            self.get_rdp(), self.orders, epsilon=epsilon, conversion=self.conversion
        )


class GDPCLTAccountant(Accountant):
    """CLT mu-GDP accountant of the DP-NF paper (registry key ``"gdp_clt"``); approximate.

    ``mu = sqrt(sum_t q_t^2 (exp(1 / sigma_t^2) - 1))`` over the recorded steps
    (Bu et al. 2020), converted to (epsilon, delta) exactly as mu-GDP. Every
    :meth:`get_epsilon` / :meth:`get_delta` call emits
    :class:`~skdp.exceptions.ApproximateGuaranteeWarning`.

    Attributes
    ----------
    history : list of (float, float, int)
        See :class:`Accountant`.
    guarantee : str
        ``"approximate"``: the CLT is a limit, not a bound; for finite numbers of steps
        it can under-state epsilon. Kept for comparison with published numbers only.

    Notes
    -----
    Add/remove-one-row neighbours, ``n`` public, Poisson-subsampled Gaussian steps.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. Su, "Gaussian Differential Privacy", arXiv:1905.02383.
    .. [2] Z. Bu, J. Dong, Q. Long, W. Su, "Deep Learning with Gaussian Differential
       Privacy", Harvard Data Science Review 2020.

    Examples
    --------
    >>> import warnings
    >>> from skdp.accounting import get_accountant
    >>> acc = get_accountant("gdp_clt").step(
    ...     noise_multiplier=7.36, sample_rate=0.5, num_steps=8000)
    >>> round(acc.get_mu(), 4)
    6.1044
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     round(acc.get_epsilon(1e-2), 3)
    31.989
    """

    name = "gdp_clt"
    guarantee = "approximate"

    def get_mu(self):
        """The CLT mu of the recorded steps."""
        mu_sq = math.fsum(n * _mu_sq_per_step(s, q) for (s, q), n in self._grouped().items())
        return math.sqrt(mu_sq)

    def get_epsilon(self, delta):
        """Approximate epsilon at ``delta``; warns (see the class docstring)."""
        warnings.warn(_GDP_WARNING, ApproximateGuaranteeWarning, stacklevel=2)
        return _gdp_epsilon_checked(delta, self.get_mu())

    def get_delta(self, epsilon):
        """Approximate delta at ``epsilon``; warns."""
        warnings.warn(_GDP_WARNING, ApproximateGuaranteeWarning, stacklevel=2)
        return gdp_delta(epsilon, self.get_mu())


def _gdp_epsilon_checked(delta, mu):
    delta = _check_real(delta, "delta", low=0.0)
    if delta >= 1.0:
        raise ValueError("delta must be < 1.")
    return gdp_epsilon(delta, mu)


# ------------------------------------------------------------------------ registry

_REGISTRY = {"rdp": RDPAccountant, "gdp_clt": GDPCLTAccountant}


def available_accountants():
    """Names accepted by :func:`get_accountant` (and by estimators' ``accountant``).

    Examples
    --------
    >>> from skdp.accounting import available_accountants
    >>> available_accountants()
    ('gdp_clt', 'rdp')
    """
    return tuple(sorted(_REGISTRY))


def register_accountant(name, factory, *, overwrite=False):
    """Register an accountant class (or factory) under a string key.

    ``factory(**kwargs)`` must return an :class:`Accountant`. Used for ``"pld"``
    once implemented.
    """
    if not isinstance(name, str) or not name:
        raise ValueError("name must be a non-empty string.")
    if name in _REGISTRY and not overwrite:
        raise ValueError(f"An accountant named {name!r} is already registered.")
    _REGISTRY[name] = factory


def get_accountant(name, **kwargs):
    """A fresh accountant for the registry key ``name``.

    Parameters
    ----------
    name : str
        ``"rdp"`` (exact; default everywhere) or ``"gdp_clt"`` (approximate, warns).
    **kwargs
        Passed to the accountant (``orders``, ``conversion`` for ``"rdp"``).

    Returns
    -------
    Accountant

    Examples
    --------
    >>> from skdp.accounting import get_accountant
    >>> get_accountant("rdp").guarantee
    'exact'
    """
    try:
        factory = _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"Unknown accountant {name!r}; available: {available_accountants()}."
        ) from None
    return factory(**kwargs)


def _rdp_only_options(accountant, orders, conversion):
    if accountant == "rdp":
        return {"orders": orders, "conversion": conversion}
    if orders is not None or conversion != "improved":
        raise ValueError("orders and conversion apply only to accountant='rdp'.")
    return {}


# ------------------------------------------------------------------ pure functions


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
        ``"rdp"`` only: Rényi orders (default the TF-Privacy grid united with 2..256).
    conversion : {"improved", "classic"}, default="improved"
        ``"rdp"`` only: RDP -> (epsilon, delta) conversion.

    Returns
    -------
    epsilon : float

    Notes
    -----
    Add/remove-one-row neighbours, ``n`` public. ``"rdp"`` is a proven upper bound;
    ``"gdp_clt"`` is approximate and emits
    :class:`~skdp.exceptions.ApproximateGuaranteeWarning`.

    References
    ----------
    .. [1] I. Mironov, K. Talwar, L. Zhang, "Rényi Differential Privacy of the Sampled
       Gaussian Mechanism", arXiv:1908.10530, 2019.
    .. [2] B. Balle et al., "Hypothesis Testing Interpretations and Renyi Differential
       Privacy", AISTATS 2020.

    Examples
    --------
    >>> from skdp.accounting import compute_epsilon
    >>> round(compute_epsilon(noise_multiplier=1.5, sample_rate=0.04, steps=2250,
    ...                       delta=1e-5), 3)
    7.33
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
    the smallest feasible value (spec README §2 row 5).

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

    def eps_at(sigma):
        acc = get_accountant(accountant, **options)
        acc.step(noise_multiplier=sigma, sample_rate=sample_rate, num_steps=steps)
        if accountant == "gdp_clt":
            return _gdp_epsilon_checked(delta, acc.get_mu())
        return acc.get_epsilon(delta)

    if eps_at(SIGMA_MIN) <= target:
        return SIGMA_MIN
    if eps_at(SIGMA_MAX) > target:
        raise BudgetExceededError(
            f"No noise multiplier in [{SIGMA_MIN}, {SIGMA_MAX}] reaches epsilon={target:g} "
            f"at delta={delta:g} with sample_rate={sample_rate:g} and steps={steps}: "
            "increase epsilon or delta, or use fewer steps or a smaller sample rate."
        )
    lo, hi = SIGMA_MIN, SIGMA_MAX  # eps(lo) > target >= eps(hi)
    while hi / lo > SIGMA_RATIO:
        mid = math.sqrt(lo * hi)
        if eps_at(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def resolve_noise_multiplier(
    *, epsilon, delta, sample_rate, steps, noise_multiplier=None, accountant="rdp"
):
    """The noise multiplier a DP-SGD fit should use, and the epsilon it spends.

    The shared rule of every DP-SGD estimator (dp_flow.md §2.6, dp_gan.md §3.5):

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
    (0.869, True)
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

"""Stateful accountants (RDP, GDP-CLT, PLD) and their string registry."""

from __future__ import annotations

import math
import warnings

import numpy as np

from skdp.accounting._gdp import (
    _mu_sq_per_step,
    gdp_delta,
    gdp_epsilon,
)
from skdp.accounting._pld import PLDTooLargeError, default_grid_step, pld_subsampled_gaussian
from skdp.accounting._rdp import (
    _check_conversion,
    _check_orders,
    _check_real,
    _check_steps,
    rdp_subsampled_gaussian,
    rdp_to_delta,
    rdp_to_epsilon,
)
from skdp.exceptions import ApproximateGuaranteeWarning
from skdp.utils._docstrings import insert_docs

__all__ = [
    "Accountant",
    "GDPCLTAccountant",
    "PLDAccountant",
    "RDPAccountant",
    "available_accountants",
    "get_accountant",
    "register_accountant",
]


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


@insert_docs
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
    .. [1] {ref_mironov2017}
    .. [2] {ref_mironov_talwar_zhang2019}
    .. [3] {ref_balle2020}

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


# beyond this many steps the PLD is not composed (seconds per order of magnitude above
# 1e12); the RDP bound is reported instead
_MAX_PLD_STEPS = 10**12


class PLDAccountant(Accountant):
    """Privacy-loss-distribution accountant (registry key ``"pld"``); exact upper bound.

    Composes the privacy loss distributions of the recorded Poisson-subsampled Gaussian
    steps numerically and reports the smaller of that epsilon and the RDP bound of the
    same steps (both are proven upper bounds, so their minimum is one too).

    Parameters
    ----------
    grid_step : float, optional
        Privacy-loss grid step. ``None`` (default) chooses it from the history:
        ``0.05`` times the root-mean-square standard deviation of one step's privacy
        loss, within ``[1e-6, 0.05]`` (see Notes). A step so fine that one step's
        distribution would need more than ``2^23`` grid points (e.g. ``1e-12``, tens of
        TiB) is not refused: the accountant falls back to the RDP bound, as for any
        history too large for the PLD.

    Attributes
    ----------
    history : list of (float, float, int)
        See :class:`Accountant`.
    guarantee : str
        ``"exact"``: the result is a proven upper bound (see Notes for the floating-point
        caveat).

    Notes
    -----
    Add/remove-one-row neighbours, ``n`` public. Each step is the sampled Gaussian
    mechanism with L2 sensitivity 1 relative to the noise. The remove direction
    (``P = (1 - q) N(0, s^2) + q N(1, s^2)`` against ``Q = N(0, s^2)``) and the add
    direction (the pair swapped) are composed separately and the larger delta is
    reported, which covers both orders of every neighbouring pair, under adaptive
    composition, and steps with different ``(noise_multiplier, sample_rate)``.

    The algorithm is pessimistic at every stage: connect-the-dots discretisation onto
    a grid of privacy losses (Doroshenko et al. 2022; its hockey-stick curve is the
    exact one at the grid points and the chord between them, which lies above the
    exact convex curve), mass below the grid rounded up, mass above it and the tails
    truncated after each convolution sent to ``+inf`` (straight into delta), and
    composition by zero-padded FFT convolution (no wrap-around) with repeated
    squaring (Koskela et al. 2020, 2021). So, for exact arithmetic, the reported delta
    is an upper bound on the mechanism's delta and epsilon an upper bound on its
    epsilon. Floating-point error (FFT round-off, about ``1e-16`` of the largest grid
    mass per point) is absorbed by clipping negative masses to zero but not bounded
    rigorously. The error is pessimistic and small: connect-the-dots adds about
    ``grid_step^2 / 12`` to the mean of each step's loss; with the default grid the
    result lies within about 0.05 % above a fine-grid PLD (and above dp-accounting's
    PLD by at most that) in the tests, where the RDP bound is 8-75 % looser. A history
    that would need more than ``2^23`` grid points falls back to the RDP bound.

    References
    ----------
    .. [1] S. Meiser, E. Mohammadi, "Tight on Budget? Tight Bounds for r-Fold
       Approximate Differential Privacy", CCS 2018.
    .. [2] A. Koskela, J. Jälkö, A. Honkela, "Computing Tight Differential Privacy
       Guarantees Using FFT", AISTATS 2020.
    .. [3] A. Koskela, J. Jälkö, L. Prediger, A. Honkela, "Tight Differential Privacy
       for Discrete-Valued Mechanisms and for the Subsampled Gaussian Mechanism Using
       FFT", AISTATS 2021.
    .. [4] V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar, P. Manurangsi, "Connect the
       Dots: Tighter Discrete Approximations of Privacy Loss Distributions", PETS 2022.
    .. [5] Y. Zhu, J. Dong, Y.-X. Wang, "Optimal Accounting of Differential Privacy via
       Characteristic Function", AISTATS 2022 (dominating pairs compose).

    Examples
    --------
    >>> from skdp.accounting import get_accountant
    >>> acc = get_accountant("pld").step(
    ...     noise_multiplier=1.5, sample_rate=0.04, num_steps=2250)
    >>> round(acc.get_epsilon(1e-5), 3)  # RDP: 7.33
    6.77
    """

    name = "pld"
    guarantee = "exact"
    _DIRECTIONS = ("remove", "add")

    def __init__(self, *, grid_step=None):
        super().__init__()
        if grid_step is not None:
            grid_step = _check_real(grid_step, "grid_step", low=0.0)
            if grid_step <= 0.0:
                raise ValueError("grid_step must be > 0.")
        self.grid_step = grid_step
        self._rdp = RDPAccountant()
        self._powers = {}
        self._composed = (None, None)

    def _active_groups(self):
        groups = {}
        for (sigma, q), n in self._grouped().items():
            if q > 0.0 and not math.isinf(sigma) and n > 0:
                groups[(sigma, q)] = n
        return groups

    def _compose(self):
        """``{direction: composed PLD}``; ``{}`` if no step has a privacy loss, ``None``
        if the PLD is infinite or too large (then only the RDP bound is used)."""
        groups = self._active_groups()
        key = (self.grid_step, tuple(sorted(groups.items())))
        if self._composed[0] == key:
            return self._composed[1]
        if any(sigma == 0.0 for sigma, _ in groups) or sum(groups.values()) > _MAX_PLD_STEPS:
            # no noise, or so many steps that composing the PLD would take minutes: the
            # (sound) RDP bound is used instead
            result = None
        elif not groups:
            result = {}
        else:
            try:
                step = self.grid_step or default_grid_step(groups)
                self._powers = {k: v for k, v in self._powers.items() if k[3] == step}
                result = {d: self._compose_direction(groups, d, step) for d in self._DIRECTIONS}
            except (PLDTooLargeError, OverflowError, ZeroDivisionError):
                # too large, or a noise multiplier so small that the loss grid overflows
                # floating point: the (sound) RDP bound is used instead
                result = None
        self._composed = (key, result)
        return result

    def _compose_direction(self, groups, direction, step):
        total = None
        for (sigma, q), n in sorted(groups.items()):
            cache_key = (sigma, q, direction, step)
            chain = self._powers.get(cache_key)
            if chain is None:
                base = pld_subsampled_gaussian(
                    noise_multiplier=sigma, sample_rate=q, direction=direction, step=step
                )
                chain = [base]
            chain = chain[0].powers(n, chain=chain)
            self._powers[cache_key] = chain
            pld = chain[0].self_compose(n, powers=chain)
            total = pld if total is None else total.compose(pld)
        return total

    def _rdp_accountant(self):
        self._rdp.history = list(self.history)
        return self._rdp

    def get_epsilon_pld(self, delta):
        """The PLD epsilon alone (``inf`` where the PLD is unavailable)."""
        delta = _check_real(delta, "delta", low=0.0)
        if delta >= 1.0:
            raise ValueError("delta must be < 1.")
        plds = self._compose()
        if plds is None:
            return math.inf
        if not plds:
            return 0.0
        return max(pld.get_epsilon(delta) for pld in plds.values())

    def get_delta_pld(self, epsilon):
        """The PLD delta alone (``1`` where the PLD is unavailable)."""
        eps = _check_real(epsilon, "epsilon", low=0.0, allow_inf=True)
        plds = self._compose()
        if plds is None:
            return 1.0
        if not plds:
            return 0.0
        return max(pld.get_delta(eps) for pld in plds.values())

    def get_epsilon(self, delta):
        """``min(PLD epsilon, RDP epsilon)`` of the recorded steps at ``delta``."""
        eps_pld = self.get_epsilon_pld(delta)
        return min(eps_pld, float(self._rdp_accountant().get_epsilon(delta)))

    def get_delta(self, epsilon):
        """``min(PLD delta, RDP delta)`` of the recorded steps at ``epsilon``."""
        delta_pld = self.get_delta_pld(epsilon)
        return min(delta_pld, float(self._rdp_accountant().get_delta(epsilon)))


def _gdp_epsilon_checked(delta, mu):
    delta = _check_real(delta, "delta", low=0.0)
    if delta >= 1.0:
        raise ValueError("delta must be < 1.")
    return gdp_epsilon(delta, mu)


# ------------------------------------------------------------------------ registry

_REGISTRY = {"rdp": RDPAccountant, "gdp_clt": GDPCLTAccountant, "pld": PLDAccountant}


def available_accountants():
    """Names accepted by :func:`get_accountant` (and by estimators' ``accountant``).

    Examples
    --------
    >>> from skdp.accounting import available_accountants
    >>> available_accountants()
    ('gdp_clt', 'pld', 'rdp')
    """
    return tuple(sorted(_REGISTRY))


def register_accountant(name, factory, *, overwrite=False):
    """Register an accountant class (or factory) under a string key.

    ``factory(**kwargs)`` must return an :class:`Accountant` (e.g. a PRV accountant,
    or an RDP accountant with other orders).
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
        ``"rdp"`` (exact; the pure functions' default), ``"pld"`` (exact and tighter:
        ``min(PLD, RDP)``; the DP-SGD estimators' default) or ``"gdp_clt"``
        (approximate, warns).
    **kwargs
        Passed to the accountant (``orders``, ``conversion`` for ``"rdp"``;
        ``grid_step`` for ``"pld"``).

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


# ------------------------------------------------------------------ pure functions

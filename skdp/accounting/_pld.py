"""Privacy loss distributions (PLD) of Poisson-subsampled Gaussian steps.

Pure numpy/scipy, float64. The accountant built on this module is
:class:`skdp.accounting.PLDAccountant` (registry key ``"pld"``).

The construction, every step of which can only *over*-state delta:

1. **Dominating pairs, both directions.** Under add/remove-one-row neighbours one
   DP-SGD step (sampling rate ``q``, noise ``sigma``, sensitivity 1) is dominated by
   the pair ``(P, Q)`` with ``P = (1 - q) N(0, s^2) + q N(1, s^2)``,
   ``Q = N(0, s^2)`` ("remove") and by ``(Q, P)`` ("add"). The two directions are
   composed separately and the larger delta is reported.
2. **Connect-the-dots discretisation** (Doroshenko et al. 2022) on the grid
   ``i * Delta``: the privacy-loss mass of each grid cell is split between the
   cell's two end points so that both its ``P``- and its ``Q``-mass are kept. The
   result is a pair of distributions whose hockey-stick curve interpolates the exact
   one at the grid points, linearly in ``exp(eps)``, and so lies above it (the exact
   curve is convex in ``exp(eps)``): a dominating pair. Mass below the grid is
   rounded *up* onto the first grid point; above the last grid point the mass is
   split between that point and ``+inf`` (the ``+inf`` part goes straight into
   delta).
3. **Composition** by linear convolution of the grid masses, computed with a
   zero-padded real FFT (the padded length is at least the length of the full
   convolution, so nothing wraps around), by repeated squaring: ``T`` steps cost
   about ``2 log2 T`` convolutions. Dominating pairs compose (Zhu, Dong & Wang
   2022, Thm. 10), so the composed grid PLD dominates the composed mechanism.
4. **Tail truncation** after every convolution: mass above the kept window goes to
   ``+inf`` (into delta), mass below it is moved up onto the window's first point.
   Both moves only increase the privacy loss. Masses below the FFT's round-off level
   cannot hold the window open, so whatever lies beyond the last above-round-off
   mass is moved too; in repeated squaring that mass is counted once per use of the
   square, so ``delta`` is over-stated by about ``T * 1e-15`` to ``T * 1e-14``
   (``5e-12`` at ``q=0.02, sigma=1, T=2000``). Deltas below that are not resolved:
   the PLD epsilon is then ``inf`` and the accountant reports the RDP bound.
5. **Queries.** ``delta(eps) = sum_l p(l) (1 - exp(eps - l))_+ + p(+inf)`` exactly,
   and ``eps(delta)`` by locating the grid cell and solving the linear equation in
   ``exp(eps)`` there.

What is rigorous: in exact arithmetic every operation above moves mass only towards
larger privacy loss, so the reported delta is an upper bound on the exact delta of
the mechanism and epsilon an upper bound on its epsilon. Floating-point error is
*not* bounded rigorously: the FFT's round-off (about ``3e-16 |a|_2 |b|_2`` per grid
point, observed) and the cancellation in the cell split (relative ``1e-8`` at most)
are absorbed by clipping negative masses to zero, which adds mass. In the tests the
result is never below the closed form of the Gaussian mechanism nor below a
fine-grid dp-accounting PLD, and lies 0.01-0.04 % above dp-accounting's default
(``1e-4``) grid where that grid is fine enough to be a reference.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft as sp_fft
from scipy.special import ndtr

__all__ = ["PrivacyLossDistribution", "pld_subsampled_gaussian", "default_grid_step"]

# Gaussian quantile at which the single-step distributions are cut (tail 5e-17; the
# cut-off mass is not dropped: it is rounded up or sent to +inf, see the module doc).
_Z_TAIL = 8.3
# Grid step = _GRID_C * the standard deviation of one step's privacy loss (averaged
# over the history), inside [_GRID_MIN, _GRID_MAX]. Connect-the-dots adds about
# Delta^2 / 12 to the mean and Delta^2 / 6 to the variance of each step's loss, so
# the error relative to the composed loss stays near _GRID_C^2 / 6 whatever T is.
_GRID_C = 0.05
_GRID_MIN = 1e-6
_GRID_MAX = 0.05
# Most grid points of one step's PLD (the grid step grows to respect it).
_MAX_STEP_POINTS = 1 << 17
# Most grid points of any composed PLD; beyond it the PLD is abandoned (inf).
_MAX_POINTS = 1 << 23
# Tail truncation after a convolution (see PrivacyLossDistribution._truncate): the
# window keeps all but _TAIL_MASS of the above-noise mass on each side; in the
# repeated-squaring chain the j-th square (used n / 2^j times) keeps all but
# _TAIL_UNIT * 2^j, so the chain adds at most about n * log2(n) * _TAIL_UNIT to delta.
_TAIL_MASS = 1e-14
_TAIL_UNIT = 1e-19
# Masses below _NOISE_FLOOR * |a|_2 |b|_2 (about 3x the largest FFT round-off seen)
# are indistinguishable from round-off: they do not hold the window open.
_NOISE_FLOOR = 1e-15


class PLDTooLargeError(RuntimeError):
    """The composed distribution needs more grid points than :data:`_MAX_POINTS`."""


# ------------------------------------------------------------------ one step


def _gauss_interval(a, b):
    """``P(a < Z <= b)`` for a standard normal ``Z`` (elementwise, ``a <= b``).

    Differences of the lower CDF left of 0 and of the upper CDF right of 0, so that
    tail intervals keep their relative precision.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    right = a >= 0
    with np.errstate(invalid="ignore"):
        out = np.where(right, ndtr(-a) - ndtr(-b), ndtr(b) - ndtr(a))
    return np.maximum(out, 0.0)


def _mixture_interval(a, b, sigma, w1):
    """``P(a < X <= b)`` for ``X ~ (1 - w1) N(0, s^2) + w1 N(1, s^2)``."""
    out = (1.0 - w1) * _gauss_interval(a / sigma, b / sigma) if w1 < 1.0 else 0.0
    if w1 > 0.0:
        out = out + w1 * _gauss_interval((a - 1.0) / sigma, (b - 1.0) / sigma)
    return out


def _log_ratio(x, sigma, q):
    """``log(1 - q + q exp((2x - 1) / (2 s^2)))``: the remove-direction loss at ``x``."""
    lin = (2.0 * np.asarray(x, dtype=np.float64) - 1.0) / (2.0 * sigma * sigma)
    if q == 1.0:
        return lin
    return np.logaddexp(math.log1p(-q), math.log(q) + lin)


def _inverse_log_ratio(u, sigma, q):
    """``x`` with ``_log_ratio(x) = u`` (increasing; ``-inf`` for ``u <= log(1 - q)``)."""
    u = np.asarray(u, dtype=np.float64)
    if q == 1.0:
        return sigma * sigma * u + 0.5
    log1m = math.log1p(-q)
    w = u - log1m  # e^u - (1 - q) = (1 - q) expm1(w)
    out = np.full(u.shape, -np.inf)
    pos = w > 0
    wp = w[pos]
    with np.errstate(divide="ignore", over="ignore"):  # np.where evaluates both branches
        log_expm1 = np.where(wp > 30.0, wp + np.log1p(-np.exp(-wp)), np.log(np.expm1(wp)))
    with np.errstate(over="ignore", invalid="ignore"):  # a huge sigma: NaN, refused later
        out[pos] = sigma * sigma * (log1m - math.log(q) + log_expm1) + 0.5
    return out


def _one_step(sigma, q, direction, step):
    """Connect-the-dots grid PLD of one step: ``(offset, masses, p_inf)``.

    ``masses[j]`` is the ``P``-probability of privacy loss ``(offset + j) * step``.
    """
    z = _Z_TAIL
    log1m = math.log1p(-q) if q < 1.0 else -math.inf
    if direction == "remove":
        # P = (1-q) N(0,s^2) + q N(1,s^2), Q = N(0,s^2); loss increasing in x.
        lo = max(log1m, float(_log_ratio(-sigma * z, sigma, q)))
        hi = float(_log_ratio(1.0 + sigma * z, sigma, q))
    else:
        # P = N(0,s^2), Q = (1-q) N(0,s^2) + q N(1,s^2); loss decreasing in x.
        lo = -float(_log_ratio(sigma * z, sigma, q))
        hi = min(-log1m, -float(_log_ratio(-sigma * z, sigma, q)))
    i_lo = math.floor(lo / step)
    i_hi = max(math.ceil(hi / step), i_lo + 1)
    if i_hi - i_lo + 1 > _MAX_POINTS:  # a user grid_step far too fine (tens of TiB)
        raise PLDTooLargeError(i_hi - i_lo + 1)
    edges = np.arange(i_lo, i_hi + 1, dtype=np.float64) * step
    if direction == "remove":
        xs = _inverse_log_ratio(edges, sigma, q)  # loss >= e  <=>  x >= xs
        x_lo, x_hi = xs[:-1], xs[1:]
        w_p, w_q = q, 0.0
        p_cell = _mixture_interval(x_lo, x_hi, sigma, w_p)
        q_cell = _mixture_interval(x_lo, x_hi, sigma, w_q)
        p_below = _mixture_interval(-np.inf, xs[0], sigma, w_p)
        p_above = _mixture_interval(xs[-1], np.inf, sigma, w_p)
        q_above = _mixture_interval(xs[-1], np.inf, sigma, w_q)
    else:
        xs = _inverse_log_ratio(-edges, sigma, q)  # loss >= e  <=>  x <= xs
        x_lo, x_hi = xs[1:], xs[:-1]
        w_p, w_q = 0.0, q
        p_cell = _mixture_interval(x_lo, x_hi, sigma, w_p)
        q_cell = _mixture_interval(x_lo, x_hi, sigma, w_q)
        p_below = _mixture_interval(xs[0], np.inf, sigma, w_p)
        p_above = _mixture_interval(-np.inf, xs[-1], sigma, w_p)
        q_above = _mixture_interval(-np.inf, xs[-1], sigma, w_q)
    # Split each cell [e_j, e_j+1): mass b to e_j+1 and p_cell - b to e_j, keeping
    # P-mass and Q-mass: b = (p_cell - e^{e_j} q_cell) / (1 - e^{-step}).
    with np.errstate(over="ignore", invalid="ignore"):
        b = (p_cell - np.exp(edges[:-1]) * q_cell) / (-math.expm1(-step))
    if not np.all(np.isfinite(b)):
        # a loss grid beyond exp's range (a tiny noise multiplier): no PLD; the caller
        # falls back to the RDP bound
        raise OverflowError("the privacy-loss grid overflows float64")
    b = np.clip(b, 0.0, p_cell)
    masses = np.zeros(edges.size)
    masses[:-1] += p_cell - b
    masses[1:] += b
    masses[0] += float(p_below)  # rounded up onto the first grid point
    # Above the last point: keep the Q-mass at that point, the rest at +inf.
    at_top = min(float(p_above), math.exp(edges[-1]) * float(q_above))
    masses[-1] += at_top
    p_inf = max(0.0, float(p_above) - at_top)
    return i_lo, masses, p_inf


def _loss_scale(sigma, q):
    """A proxy of the standard deviation of one step's privacy loss."""
    if q == 0.0 or math.isinf(sigma):
        return 0.0
    inv = 1.0 / (sigma * sigma)
    var = inv if inv > 700 else min(q * q * math.expm1(inv), inv)
    return math.sqrt(var)


def default_grid_step(groups):
    """Grid step for a history ``{(sigma, q): n_steps}``.

    ``_GRID_C`` times the root-mean-square (over steps) proxy of one step's loss
    standard deviation, within ``[_GRID_MIN, _GRID_MAX]``, and coarse enough that one
    step's PLD has at most ``_MAX_STEP_POINTS`` points.
    """
    total = sum(groups.values())
    if total == 0:
        return _GRID_MAX
    mean_var = sum(n * _loss_scale(s, q) ** 2 for (s, q), n in groups.items()) / total
    step = min(_GRID_MAX, max(_GRID_MIN, _GRID_C * math.sqrt(mean_var)))
    # Keep one step's grid within _MAX_STEP_POINTS (only bites for tiny q).
    for sigma, q in groups:
        if q == 0.0 or math.isinf(sigma) or sigma == 0.0:
            continue
        width = float(_log_ratio(1.0 + sigma * _Z_TAIL, sigma, q)) - max(
            math.log1p(-q) if q < 1.0 else -math.inf,
            float(_log_ratio(-sigma * _Z_TAIL, sigma, q)),
        )
        step = max(step, width / _MAX_STEP_POINTS)
    return step


# ------------------------------------------------------------------ PLD object


def _convolve(a, b, square=False):
    """Linear convolution of two non-negative vectors by a zero-padded real FFT."""
    n = a.size + b.size - 1
    if min(a.size, b.size) <= 64:
        out = np.convolve(a, b)
    else:
        nfft = sp_fft.next_fast_len(n, real=True)
        fa = sp_fft.rfft(a, nfft)
        fb = fa if square else sp_fft.rfft(b, nfft)
        out = sp_fft.irfft(fa * fb, nfft)[:n]
    return np.maximum(out, 0.0)


class PrivacyLossDistribution:
    """A privacy loss distribution on the grid ``step * (offset + arange(len(masses)))``.

    ``masses`` are ``P``-probabilities of the privacy loss ``log(P/Q)`` at the grid
    points and ``p_inf`` the probability of an infinite loss. Build one with
    :func:`pld_subsampled_gaussian`; compose with :meth:`compose` or
    :meth:`self_compose`; query with :meth:`get_delta` and :meth:`get_epsilon`.

    Parameters
    ----------
    step : float
        Grid step.
    offset : int
        Grid index of ``masses[0]``.
    masses : ndarray of float
        Non-negative masses.
    p_inf : float, default=0
        Mass at ``+inf``.
    """

    def __init__(self, step, offset, masses, p_inf=0.0):
        self.step = float(step)
        self.offset = int(offset)
        self.masses = np.asarray(masses, dtype=np.float64)
        self.p_inf = float(p_inf)

    @property
    def losses(self):
        """The grid losses of :attr:`masses`."""
        return (self.offset + np.arange(self.masses.size)) * self.step

    def _truncate(self, tail_mass, floor):
        """Cut both tails (mass moved up or to +inf, see the module docstring).

        The window is chosen on the masses above ``floor`` (round-off level) so that
        at most ``tail_mass`` of them lies outside on each side; *all* mass outside
        the window is moved (the lower part up onto the window, the upper part to
        ``+inf``), so nothing is dropped.
        """
        m = self.masses
        if m.size <= 2:
            return self
        sig = np.where(m > floor, m, 0.0)
        head = np.cumsum(sig)
        tail = np.cumsum(sig[::-1])
        lo = int(np.searchsorted(head, tail_mass, side="right"))
        hi = m.size - 1 - int(np.searchsorted(tail, tail_mass, side="right"))
        lo = min(lo, m.size - 1)
        hi = max(hi, lo)
        if lo == 0 and hi == m.size - 1:
            return self
        kept = m[lo : hi + 1].copy()
        kept[0] += m[:lo].sum()
        p_up = m[hi + 1 :].sum()
        self.masses = kept
        self.offset += lo
        self.p_inf = self.p_inf + p_up - self.p_inf * p_up
        return self

    def compose(self, other, tail_mass=_TAIL_MASS):
        """The PLD of this mechanism followed by ``other`` (same grid step).

        ``tail_mass``: the most above-round-off mass cut from each tail (see
        :meth:`_truncate`).
        """
        if other.step != self.step:
            raise ValueError("PLDs on different grids cannot be composed.")
        size = self.masses.size + other.masses.size - 1
        if size > _MAX_POINTS:
            raise PLDTooLargeError(size)
        square = other is self
        masses = _convolve(self.masses, other.masses, square=square)
        floor = _NOISE_FLOOR * float(np.linalg.norm(self.masses) * np.linalg.norm(other.masses))
        p_inf = self.p_inf + other.p_inf - self.p_inf * other.p_inf
        return PrivacyLossDistribution(
            self.step, self.offset + other.offset, masses, p_inf
        )._truncate(tail_mass, floor)

    def powers(self, n, chain=None):
        """``[self, self^2, self^4, ...]`` up to the highest bit of ``n``.

        The ``j``-th square cuts at most ``_TAIL_UNIT * 2^j`` from each tail. Pass a
        previous result as ``chain`` to extend it.
        """
        out = [self] if chain is None else list(chain)
        while len(out) < int(n).bit_length():
            out.append(out[-1].compose(out[-1], tail_mass=_TAIL_UNIT * 2.0 ** len(out)))
        return out

    def self_compose(self, n, powers=None):
        """``n``-fold composition by repeated squaring (``powers`` may be cached)."""
        n = int(n)
        if n < 1:
            raise ValueError("n must be >= 1.")
        powers = self.powers(n) if powers is None else powers
        result = None
        for bit in range(n.bit_length()):
            if n >> bit & 1:
                result = powers[bit] if result is None else result.compose(powers[bit])
        return result

    def get_delta(self, epsilon):
        """``delta(eps) = sum_l p(l) (1 - exp(eps - l))_+ + p(+inf)``."""
        eps = float(epsilon)
        if math.isinf(eps):
            return self.p_inf if eps > 0 else 1.0
        start = max(0, math.floor(eps / self.step) - self.offset)
        losses = (self.offset + np.arange(start, self.masses.size)) * self.step
        m = self.masses[start:]
        above = losses > eps
        total = float(np.dot(m[above], -np.expm1(eps - losses[above])))
        return min(1.0, total + self.p_inf)

    def get_epsilon(self, delta):
        """Smallest ``eps >= 0`` with ``delta(eps) <= delta`` (``inf`` if none)."""
        delta = float(delta)
        if self.p_inf > delta:
            return math.inf
        if self.get_delta(0.0) <= delta:
            return 0.0
        losses = self.losses
        # delta(l_k) is decreasing in k; find the last grid loss > 0 with delta > target.
        k0 = int(np.searchsorted(losses, 0.0, side="right"))
        lo, hi = k0 - 1, losses.size - 1  # delta(max(l_lo, 0)) > target >= delta(l_hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.get_delta(losses[mid]) > delta:
                lo = mid
            else:
                hi = mid
        # On [l_lo, l_hi] (or [0, l_hi]) delta(eps) = A - e^{eps - l_hi} C, exactly.
        l_hi = losses[hi]
        m = self.masses[hi:]
        a = float(m.sum()) + self.p_inf
        c = float(np.dot(m, np.exp(l_hi - losses[hi:])))
        if c <= 0.0:
            return float(l_hi)
        ratio = (a - delta) / c
        eps = l_hi + math.log(ratio) if ratio > 0 else l_hi
        return max(0.0, min(float(eps), float(l_hi)))


def pld_subsampled_gaussian(*, noise_multiplier, sample_rate, direction, step):
    """Connect-the-dots PLD of one Poisson-subsampled Gaussian step.

    Parameters
    ----------
    noise_multiplier : float
        ``sigma > 0``, finite.
    sample_rate : float
        ``q`` in ``(0, 1]``.
    direction : {"remove", "add"}
        ``"remove"``: ``P = (1-q) N(0, s^2) + q N(1, s^2)`` against ``Q = N(0, s^2)``;
        ``"add"``: the pair swapped.
    step : float
        Grid step (> 0).

    Returns
    -------
    PrivacyLossDistribution
        A dominating pair of the step, supported on the grid and ``+inf``.

    Examples
    --------
    >>> from skdp.accounting._pld import pld_subsampled_gaussian
    >>> pld = pld_subsampled_gaussian(noise_multiplier=1.0, sample_rate=1.0,
    ...                               direction="remove", step=1e-3)
    >>> exact = 4.37717810  # the Gaussian mechanism, closed form
    >>> 0 <= pld.get_epsilon(1e-5) - exact < 1e-3
    True
    """
    sigma = float(noise_multiplier)
    q = float(sample_rate)
    if direction not in ("remove", "add"):
        raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}.")
    if not (0.0 < sigma < math.inf) or not (0.0 < q <= 1.0):
        raise ValueError("Need 0 < noise_multiplier < inf and 0 < sample_rate <= 1.")
    offset, masses, p_inf = _one_step(sigma, q, direction, float(step))
    return PrivacyLossDistribution(step, offset, masses, p_inf)

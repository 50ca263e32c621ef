"""Exponential mechanism (log space, Gumbel-max) and its subsampled variant."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from skdp.mechanisms._validation import check_epsilon, check_positive, check_rng
from skdp.utils.validation import as_float_array, check_n_samples

__all__ = [
    "exponential_mechanism",
    "exponential_mechanism_log_probs",
    "report_noisy_max",
    "subsampled_exponential_mechanism",
]


def _check_utilities(utilities, epsilon, sensitivity):
    """``(u, epsilon, sensitivity)`` checked: ``u`` a non-empty, finite 1-d float array."""
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    u = as_float_array(utilities, name="utilities")
    if u.ndim != 1 or u.size == 0:
        raise ValueError("utilities must be a non-empty 1-d array")
    if not np.all(np.isfinite(u)):
        raise ValueError("utilities must be finite")
    return u, epsilon, sensitivity


def _log_weights(utilities, epsilon, sensitivity, log_base_measure):
    """Unnormalised log weights ``ε (u − max u) / (2Δ) + log μ``; never NaN or +inf."""
    u, epsilon, sensitivity = _check_utilities(utilities, epsilon, sensitivity)
    if log_base_measure is None:
        log_mu = np.zeros_like(u)
    else:
        log_mu = as_float_array(log_base_measure, name="log_base_measure")
        if log_mu.ndim > 1 or log_mu.size not in (1, u.size):
            raise ValueError("log_base_measure must be a scalar or have one entry per utility")
        log_mu = np.broadcast_to(log_mu, u.shape)
        if np.any(np.isnan(log_mu)) or np.any(log_mu == np.inf):
            raise ValueError("log_base_measure must not contain NaN or +inf")
    support = log_mu > -np.inf
    if not support.any():
        raise ValueError("log_base_measure gives every candidate zero mass")
    if math.isinf(epsilon):
        # no privacy: uniform over the maximisers within the support
        best = u[support].max()
        return np.where(support & (u == best), 0.0, -np.inf)
    # u - max(u) lies in [-inf, 0] (it may overflow to -inf for |u| ~ 1e308: weight 0)
    with np.errstate(over="ignore"):
        shifted = u - u[support].max()
        coef = epsilon / (2.0 * sensitivity)
        scaled = coef * shifted if math.isfinite(coef) else np.where(shifted == 0, 0.0, -np.inf)
    scaled = np.where(np.isnan(scaled), -np.inf, scaled)
    return np.where(support, scaled + log_mu, -np.inf)


def exponential_mechanism_log_probs(utilities, *, epsilon, sensitivity, log_base_measure=None):
    """Exact log selection probabilities of :func:`exponential_mechanism`.

    ``log P(i) = ε u_i / (2Δ) + log μ_i − logsumexp_j(ε u_j / (2Δ) + log μ_j)``,
    computed after subtracting ``max u`` so that huge utilities (``1e300``) do not
    overflow.

    Parameters
    ----------
    utilities : array-like of shape (k,)
        Finite utilities.
    epsilon : float
        ``> 0``; ``inf`` gives the uniform law over the maximisers.
    sensitivity : float
        ``Δ > 0``, the largest change of any utility between neighbouring datasets.
    log_base_measure : array-like of shape (k,), optional
        Log of a data-independent (possibly unnormalised) base measure; ``-inf``
        excludes a candidate.

    Returns
    -------
    ndarray of shape (k,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import exponential_mechanism_log_probs
    >>> p = np.exp(exponential_mechanism_log_probs([0.0, 1.0], epsilon=2.0, sensitivity=1.0))
    >>> bool(np.isclose(p[1] / p[0], np.e))
    True
    """
    lw = _log_weights(utilities, epsilon, sensitivity, log_base_measure)
    return lw - logsumexp(lw)


def exponential_mechanism(utilities, *, epsilon, sensitivity, rng, log_base_measure=None):
    """Select an index with probability ∝ ``exp(ε u_i / (2Δ)) μ_i`` (McSherry & Talwar 2007).

    ε-DP whenever every utility changes by at most ``sensitivity`` between
    neighbouring datasets (under the caller's relation) and the base measure ``μ`` is
    data-independent (McSherry & Talwar 2007; Lantz 2016 Thm 2.6 with exponent ``ε / (2Δ)``).
    Sampled exactly in log space with the Gumbel-max trick: ``argmax_i(log w_i + G_i)``
    with i.i.d. standard Gumbel ``G_i``; utilities as large as ``±1e300`` and ``-inf``
    log-measures are handled. ``epsilon=inf`` picks uniformly among the maximisers
    (no privacy).

    Parameters
    ----------
    utilities : array-like of shape (k,)
    epsilon : float
    sensitivity : float
    rng : numpy.random.Generator
    log_base_measure : array-like of shape (k,), optional

    Returns
    -------
    int
        The index of the candidate drawn.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import exponential_mechanism
    >>> exponential_mechanism([0.0, 1e300], epsilon=1.0, sensitivity=1.0,
    ...                       rng=np.random.default_rng(0))
    1
    """
    check_rng(rng)
    lw = _log_weights(utilities, epsilon, sensitivity, log_base_measure)
    g = rng.gumbel(size=lw.shape)
    return int(np.argmax(np.where(lw > -np.inf, lw + g, -np.inf)))


def subsampled_exponential_mechanism(
    sample_candidates, utility, *, m, epsilon, sensitivity, rng, replace=True
):
    """Subsampled exponential mechanism (SSEM; Lantz 2016 ch. 8; Lantz, Boyd & Page 2015).

    Draws ``m`` candidates from a **data-independent** base distribution with
    ``sample_candidates(m, rng)`` and selects one of them with the exponential
    mechanism (exponent ``ε / (2Δ)``, uniform base measure over the drawn multiset,
    duplicates counted with multiplicity).

    Privacy: ε-DP whenever each utility changes by at most ``sensitivity`` between
    neighbouring datasets. This is Thm 8.2 (stated there as ``2εΔ``-DP for weights
    ``exp(ε q)``), rescaled so that ``epsilon`` is the total guarantee; the proof only
    needs the candidate draw to be data-independent, so it holds with duplicates
    (counted with multiplicity; the proof's ``I[z* in Z]`` ignores them) and for
    sampling without replacement; skdp's tests confirm it by exact enumeration on small
    instances. The guarantee is
    *not* that of the exponential mechanism over the whole base distribution: with
    replacement the output law differs from it, but the privacy bound is the same.

    Parameters
    ----------
    sample_candidates : callable ``(m, rng) -> array`` with first axis ``m``
        Must not look at the private data.
    utility : callable ``(candidates) -> array of shape (m,)``
    m : int
        Number of candidates, ``>= 1``.
    epsilon, sensitivity : float
    rng : numpy.random.Generator
    replace : bool, default=True
        Declares how ``sample_candidates`` draws (the sampler is responsible). With
        ``replace=False`` the candidates are checked to be distinct (along the first
        axis) and a ``ValueError`` is raised otherwise.

    Returns
    -------
    candidates : array with first axis ``m``
        What ``sample_candidates`` returned.
    index : int
        The chosen row; the release is ``candidates[index]``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import subsampled_exponential_mechanism
    >>> data = np.array([0.1, 0.2, 0.3])
    >>> cands, i = subsampled_exponential_mechanism(
    ...     lambda m, rng: rng.uniform(0, 1, size=m),
    ...     lambda c: -np.abs(data[:, None] - c[None, :]).sum(axis=0),
    ...     m=10, epsilon=1.0, sensitivity=1.0, rng=np.random.default_rng(0))
    >>> 0 <= i < 10
    True
    """
    check_rng(rng)
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m must be a positive integer, got {m!r}")
    m = check_n_samples(m, name="m")  # at most MAX_OUTPUT_ELEMENTS candidates
    candidates = sample_candidates(m, rng)
    cand_arr = np.asarray(candidates)
    if cand_arr.ndim == 0 or cand_arr.shape[0] != m:
        raise ValueError("sample_candidates(m, rng) must return an array with first axis m")
    if not replace:
        flat = cand_arr.reshape(m, -1)
        if np.unique(flat, axis=0).shape[0] != m:
            raise ValueError("replace=False but sample_candidates returned duplicate candidates")
    u = as_float_array(utility(candidates), name="utility(candidates)").reshape(-1)
    if u.shape != (m,):
        raise ValueError("utility(candidates) must return m utilities")
    index = exponential_mechanism(u, epsilon=epsilon, sensitivity=sensitivity, rng=rng)
    return candidates, index


def _check_exclude(exclude, k):
    """``exclude`` as int64 indices in ``[0, k)`` (an IndexError from numpy otherwise)."""
    idx = np.asarray(exclude)
    if idx.dtype == bool or (idx.size and idx.dtype.kind not in "iu") or idx.ndim > 1:
        raise TypeError("exclude must be a 1-d array-like of integer indices")
    idx = idx.astype(np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= k):
        raise ValueError(f"exclude must hold indices in [0, {k}) (one per utility)")
    return idx


def report_noisy_max(
    utilities, *, epsilon, sensitivity, rng, monotonic=False, exclude=None, secure_mode=False
):
    """Report Noisy Max with Laplace noise: ``argmax_i(u_i + Lap(b))``.

    ``b = sensitivity / epsilon`` when the utilities are *monotone* (between neighbours
    they all move in the same direction, e.g. counts under add/remove: Dwork & Roth 2014,
    Claim 3.9), else ``b = 2 sensitivity / epsilon``. Either way
    ε-DP (exact) for utilities whose change between neighbouring datasets is at most
    ``sensitivity``. For peeling (top-k), call it ``k`` times with ``exclude`` holding
    the indices already chosen and ``epsilon / k`` each (sequential composition).

    Parameters
    ----------
    utilities : array-like of shape (k,)
        Finite.
    epsilon : float
        ``> 0``; ``inf`` returns a maximiser (first one).
    sensitivity : float
        ``> 0``.
    rng : numpy.random.Generator
    monotonic : bool, default=False
    exclude : array-like of int, optional
        Indices in ``[0, k)`` that cannot be returned (public); others raise
        ``ValueError``.
    secure_mode : bool, default=False
        Exact discrete Laplace noise of scale ``sensitivity / epsilon`` from
        ``os.urandom`` (:func:`discrete_laplace_noise`; ``rng`` is not read), for
        *monotone* integer utilities of integer ``sensitivity`` (``ValueError``
        otherwise): fixing the other noises, candidate ``i`` wins iff its noise reaches
        an integer threshold, which a neighbour moves by at most ``sensitivity`` in one
        direction, and the discrete Laplace tail has ``P(X >= t + c) >= exp(-c epsilon /
        sensitivity) P(X >= t)`` for integers ``t`` and ``c >= 0`` (Dwork & Roth 2014,
        Claim 3.9, on the integers). Ties go to the first maximiser.

    Returns
    -------
    int
        The index of the largest noisy utility.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import report_noisy_max
    >>> rng = np.random.default_rng(0)
    >>> report_noisy_max([10, 500, 20], epsilon=1.0, sensitivity=1.0, monotonic=True, rng=rng)
    1
    """
    if not secure_mode:
        check_rng(rng)
    u, epsilon, sensitivity = _check_utilities(utilities, epsilon, sensitivity)
    allowed = np.ones(u.size, dtype=bool)
    if exclude is not None:
        allowed[_check_exclude(exclude, u.size)] = False
    if not allowed.any():
        raise ValueError("every candidate is excluded")
    if secure_mode:
        return _exact_noisy_max(u, epsilon, sensitivity, monotonic, allowed)
    if math.isinf(epsilon):
        noisy = u
    else:
        scale = (1.0 if monotonic else 2.0) * sensitivity / epsilon
        noisy = u + rng.laplace(0.0, scale, size=u.size)
    return int(np.argmax(np.where(allowed, noisy, -np.inf)))


def _exact_noisy_max(u, epsilon, sensitivity, monotonic, allowed):
    """:func:`report_noisy_max`'s ``secure_mode``: integer arithmetic throughout."""
    from skdp.mechanisms._discrete import discrete_laplace_noise

    if not monotonic:
        raise ValueError("the exact report-noisy-max needs monotone utilities")
    if not np.array_equal(u, np.round(u)) or sensitivity != round(sensitivity):
        raise ValueError("the exact report-noisy-max needs integer utilities and sensitivity")
    noisy = u.astype(np.int64)
    if math.isfinite(epsilon):
        noisy = noisy + discrete_laplace_noise(
            u.size, scale=sensitivity / epsilon, secure_mode=True
        )
    return int(np.argmax(np.where(allowed, noisy, np.iinfo(np.int64).min)))

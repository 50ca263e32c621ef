"""Composition of (epsilon, delta) guarantees: sequential, parallel, advanced."""

from __future__ import annotations

import math

from skdp.accounting._rdp import _check_real, _check_steps

__all__ = ["compose_advanced", "compose_parallel", "compose_sequential"]


def _check_spend(pair, where="spend"):
    try:
        eps, delta = pair
    except (TypeError, ValueError):
        raise ValueError(f"Each {where} must be an (epsilon, delta) pair.") from None
    eps = _check_real(eps, "epsilon", low=0.0, allow_inf=True)
    delta = _check_real(delta, "delta", low=0.0, high=1.0)
    return eps, delta


def compose_sequential(spends):
    """Basic sequential composition: the sum of the epsilons and of the deltas.

    Running mechanisms that are (eps_i, delta_i)-DP on the same data gives
    (sum eps_i, sum delta_i)-DP (Dwork & Roth 2014, Thm. 3.16), whatever the
    neighbouring relation, as long as every mechanism uses the same one. The sums
    use :func:`math.fsum`; the delta sum is capped at 1.

    Parameters
    ----------
    spends : iterable of (float, float)
        ``(epsilon, delta)`` pairs, ``epsilon >= 0`` (``inf`` allowed),
        ``0 <= delta <= 1``.

    Returns
    -------
    epsilon, delta : float
        The sums (delta capped at 1); ``(0.0, 0.0)`` for an empty iterable.

    References
    ----------
    .. [1] C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
       Found. Trends Theor. Comput. Sci. 9(3-4), 2014.

    Examples
    --------
    >>> from skdp.accounting import compose_sequential
    >>> compose_sequential([(0.5, 1e-6), (0.25, 0.0)])
    (0.75, 1e-06)
    """
    pairs = [_check_spend(p) for p in spends]
    if not pairs:
        return 0.0, 0.0
    eps = math.fsum(e for e, _ in pairs) if all(math.isfinite(e) for e, _ in pairs) else math.inf
    delta = min(1.0, math.fsum(d for _, d in pairs))
    return eps, delta


def compose_parallel(spends):
    """Parallel composition over disjoint parts of the data: the maximum of each.

    Mechanisms applied to *disjoint* subsets of the rows (the split itself not
    depending on the private data, e.g. fixed CV folds) give
    ``(max eps_i, max delta_i)``-DP under add/remove-one-row (McSherry 2009, Thm. 4):
    one row changes the input of one mechanism only.

    Parameters
    ----------
    spends : iterable of (float, float)
        ``(epsilon, delta)`` pairs.

    Returns
    -------
    epsilon, delta : float
        The largest epsilon and the largest delta; ``(0.0, 0.0)`` for an empty iterable.

    References
    ----------
    .. [1] F. McSherry, "Privacy Integrated Queries", SIGMOD 2009.

    Examples
    --------
    >>> from skdp.accounting import compose_parallel
    >>> compose_parallel([(0.5, 1e-6), (0.25, 1e-5)])
    (0.5, 1e-05)
    """
    pairs = [_check_spend(p) for p in spends]
    if not pairs:
        return 0.0, 0.0
    return max(e for e, _ in pairs), max(d for _, d in pairs)


def compose_advanced(epsilon, delta=0.0, *, k, delta_prime):
    """Advanced composition of ``k`` runs of an (epsilon, delta)-DP mechanism.

    ``eps' = sqrt(2 k log(1/delta')) eps + k eps (exp(eps) - 1)`` and
    ``delta_total = k delta + delta'`` (Dwork, Rothblum & Vadhan 2010; Dwork & Roth
    2014, Thm. 3.20). It beats :func:`compose_sequential` only for many small-epsilon
    runs; take the smaller of the two if you want the best of both. A per-run epsilon
    above 700 (where ``exp(eps)`` overflows float64) gives ``eps' = inf``.

    Parameters
    ----------
    epsilon : float
        Per-run epsilon, >= 0.
    delta : float, default=0.0
        Per-run delta.
    k : int
        Number of runs, >= 0.
    delta_prime : float
        Extra delta in ``(0, 1)`` paid for the advanced bound.

    Returns
    -------
    epsilon, delta : float

    References
    ----------
    .. [1] C. Dwork, G. Rothblum, S. Vadhan, "Boosting and Differential Privacy",
       FOCS 2010.

    Examples
    --------
    >>> from skdp.accounting import compose_advanced
    >>> eps, delta = compose_advanced(0.01, 0.0, k=10_000, delta_prime=1e-6)
    >>> round(eps, 3), delta
    (6.262, 1e-06)
    """
    eps = _check_real(epsilon, "epsilon", low=0.0, allow_inf=True)
    delta = _check_real(delta, "delta", low=0.0, high=1.0)
    k = _check_steps(k, "k")
    dp = _check_real(delta_prime, "delta_prime", low=0.0, high=1.0)
    if not 0.0 < dp < 1.0:
        raise ValueError("delta_prime must be in (0, 1).")
    if k == 0:
        return 0.0, 0.0
    if math.isinf(eps) or eps > 700.0:  # exp(eps) overflows: the bound is beyond float64
        return math.inf, min(1.0, k * delta + dp)
    total = math.sqrt(2.0 * k * math.log(1.0 / dp)) * eps + k * eps * math.expm1(eps)
    return total, min(1.0, k * delta + dp)

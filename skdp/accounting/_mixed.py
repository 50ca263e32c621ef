"""One account for a Gaussian release followed by DP-SGD steps (RDP or PLD).

A fit that first releases statistics with the (full-batch) Gaussian mechanism and then
runs ``steps`` Poisson-subsampled Gaussian steps can account both in one account
instead of splitting ``(epsilon, delta)`` between them. ``accountant="rdp"``: Rényi-DP
curves add (Mironov 2017, Prop. 1), and one conversion to ``(epsilon, delta)`` at the
end (Balle et al. 2020, the improved conversion of :func:`skdp.accounting.rdp_to_epsilon`)
is tighter than two conversions with their epsilons and deltas added.
``accountant="pld"``: :class:`~skdp.accounting.PLDAccountant` composes the privacy loss
distributions of the release (one step at sampling rate 1, whose distribution is the
Gaussian mechanism's) and of the DP-SGD steps numerically, and reports ``min(PLD,
RDP)``; tighter again (Koskela et al. 2020; Doroshenko et al. 2022).

Neighbours: add/remove one privacy unit; ``gaussian_noise_multiplier`` is the Gaussian
release's noise standard deviation over its L2 sensitivity per unit, and
``noise_multiplier`` that of each DP-SGD step (over the clipping norm). Exact (the RDP
bounds and the PLD accountant's pessimistic discretisation are upper bounds; no
approximation).
"""

from __future__ import annotations

import functools

from skdp.accounting._accountant import PLDAccountant, RDPAccountant
from skdp.accounting._calibration import bracket_below, geometric_bisection

__all__ = ["calibrate_joint_noise", "joint_gaussian_epsilon", "joint_history_epsilon"]

#: The accountants a joint account can use.
JOINT_ACCOUNTANTS = {"rdp": RDPAccountant, "pld": PLDAccountant}


def _check_accountant(accountant):
    if accountant not in JOINT_ACCOUNTANTS:
        raise ValueError(
            f"accountant must be one of {sorted(JOINT_ACCOUNTANTS)}, got {accountant!r}"
        )
    return accountant


def joint_gaussian_epsilon(
    *, gaussian_noise_multiplier, noise_multiplier, sample_rate, steps, delta, accountant="rdp"
):
    """Epsilon of one Gaussian release composed with ``steps`` DP-SGD steps
    (``accountant``: ``"rdp"`` or ``"pld"``).

    Examples
    --------
    >>> from skdp.accounting._mixed import joint_gaussian_epsilon
    >>> eps = joint_gaussian_epsilon(gaussian_noise_multiplier=20.0, noise_multiplier=1.0,
    ...                              sample_rate=0.01, steps=1000, delta=1e-5)
    >>> 0.0 < eps < 10.0
    True
    """
    return joint_history_epsilon(
        gaussian_noise_multiplier=gaussian_noise_multiplier,
        history=[(noise_multiplier, sample_rate, steps)],
        delta=delta,
        accountant=accountant,
    )


def calibrate_joint_noise(
    *, epsilon, delta, sample_rate, steps, gaussian_noise_multiplier, ratio=1.001,
    accountant="rdp",
):  # fmt: skip
    """Smallest DP-SGD noise multiplier (within ``ratio``) such that the Gaussian
    release and the ``steps`` DP-SGD steps together spend at most ``(epsilon, delta)``
    (:func:`joint_gaussian_epsilon`); ``ValueError`` when the Gaussian release alone
    spends the budget. ``accountant="pld"`` starts from the RDP answer (feasible under
    ``min(PLD, RDP)`` too) and bisects below it.

    Examples
    --------
    >>> from skdp.accounting._mixed import calibrate_joint_noise, joint_gaussian_epsilon
    >>> s = calibrate_joint_noise(epsilon=1.0, delta=1e-5, sample_rate=0.01, steps=500,
    ...                           gaussian_noise_multiplier=20.0)
    >>> joint_gaussian_epsilon(gaussian_noise_multiplier=20.0, noise_multiplier=s,
    ...                        sample_rate=0.01, steps=500, delta=1e-5) <= 1.0
    True
    """
    return _calibrate_joint(
        float(epsilon), float(delta), float(sample_rate), int(steps),
        float(gaussian_noise_multiplier), float(ratio), _check_accountant(accountant),
    )  # fmt: skip


@functools.lru_cache(maxsize=256)
def _calibrate_joint(epsilon, delta, sample_rate, steps, gaussian_noise_multiplier, ratio,
                     accountant):  # fmt: skip
    """:func:`calibrate_joint_noise` on hashable floats, cached (a pure function of
    public numbers: a fit with the same plan repeats it)."""

    def feasible(sigma):
        eps = joint_gaussian_epsilon(
            gaussian_noise_multiplier=gaussian_noise_multiplier,
            noise_multiplier=sigma,
            sample_rate=sample_rate,
            steps=steps,
            delta=delta,
            accountant=accountant,
        )
        return eps <= epsilon

    if accountant == "pld":  # the RDP answer is feasible under min(PLD, RDP): go below it
        hi = _calibrate_joint(epsilon, delta, sample_rate, steps, gaussian_noise_multiplier,
                              ratio, "rdp")  # fmt: skip
        lo, hi = bracket_below(feasible, hi, 1e-3)
        return hi if lo is None else float(geometric_bisection(feasible, lo, hi, ratio))
    hi = 1e4
    if not feasible(hi):
        raise ValueError("the Gaussian release alone spends the budget: raise epsilon or its noise")
    lo = 1e-3
    if feasible(lo):
        return lo
    return float(geometric_bisection(feasible, lo, hi, ratio))


def joint_history_epsilon(*, gaussian_noise_multiplier, history, delta, accountant="rdp"):
    """:func:`joint_gaussian_epsilon` over executed DP-SGD steps: ``history`` is a list
    of ``(noise_multiplier, sample_rate, steps)`` (the trainers' accountant records)."""
    history = tuple((float(a), float(q), int(t)) for a, q, t in history)
    return _history_epsilon(
        float(gaussian_noise_multiplier), history, float(delta), _check_accountant(accountant)
    )


@functools.lru_cache(maxsize=256)
def _history_epsilon(gaussian_noise_multiplier, history, delta, accountant):
    """:func:`joint_history_epsilon` on hashable arguments, cached (public numbers): the
    shared :class:`~skdp.accounting.RDPAccountant` or
    :class:`~skdp.accounting.PLDAccountant`, with the Gaussian release as one step of
    sampling rate 1 (the subsampled Gaussian at ``q = 1`` is the Gaussian mechanism, in
    RDP and in its privacy loss distribution)."""
    acc = JOINT_ACCOUNTANTS[accountant]()
    if gaussian_noise_multiplier != float("inf"):
        acc.step(noise_multiplier=gaussian_noise_multiplier, sample_rate=1.0, num_steps=1)
    for sigma, q, steps in history:
        if steps > 0:
            acc.step(noise_multiplier=sigma, sample_rate=q, num_steps=steps)
    return float(acc.get_epsilon(delta))

"""Designs measured for ``DPCoxPH.conf_int`` where the released ``n epsilon`` is 1,500-2,000
and none kept (:doc:`/inference`, section "A second simulator per estimator"): a record, so
that each number in the docs can be reproduced at the commit that wrote it.

Each design replaces one private function of :mod:`skdp.survival._cox_inference` (and,
for ``precond``, of :mod:`skdp.survival._cox_fit`) inside the worker process, then runs
the cohorts of ``benchmarks/intervals_cox.py`` (same simulators, seeds and defaults):

* ``shipped``: nothing replaced.
* ``factor``: the curvature's ``beta`` block shrunk towards a constant-correlation target
  (Ledoit & Wolf 2004; logistic regression's ``factor_fisher``) instead of shrinking its
  eigenvalues towards their mean; the rest shipped.
* ``factor_exact``: that estimate in the structured draws, with the exact shrinkage
  correction ``(I - A^K)^-1`` instead of the first-order one.
* ``precond``: **the fit itself changed**: the Newton steps use the block-diagonal
  estimate of the curvature (the events per interval; the ``beta`` block's eigenvalues
  shrunk towards their mean, floored at ``sigma_H sqrt(d)``) as their matrix instead of
  the release floored at ``2 sigma_H sqrt(J + d)``, so the path converges further; the
  interval recomputes the same path.
* ``union``: the union of the shipped interval and the flat-prior draws with the exact
  correction (covers whichever correction is right), ``P>|z|`` the larger of the two.

A suffix ``_inf`` fits with ``inference=True``. Reported per cell: the worst and mean
coverage, the largest width over the oracle, the mean absolute width, the RMSE of
``coef_`` and the zero coefficient's rejections at 5 % and KS p-value.

Run::

    python benchmarks/intervals_cox_designs.py --reps 100 --jobs 2 \\
        --designs shipped precond_inf union --cells 500/3/5 2000/1/5 \\
        --simulators weibull exponential
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _interval_grid import map_reps  # noqa: E402
from intervals_cox import TRUTHS, _seed, one_rep  # noqa: E402
from scipy import stats  # noqa: E402


def _factor(inf):
    """``_information`` with the constant-correlation target for the ``beta`` block."""
    from skdp.linear_model._inference_logistic_boot import factor_fisher

    shipped = inf._information

    def information(est, stats_, J):
        D, _ = shipped(est, stats_, J)
        s_h = float(est.noise_scale_["hessian"])
        H = np.asarray(stats_["hessian"], float)
        # factor_fisher's noise variance is 2 scale^2 (Laplace): scale s_h / sqrt(2)
        return D, factor_fisher(H[J:, J:], s_h / np.sqrt(2.0), s_h, False)

    inf._information = information


def _exact_structured(inf):
    """``_coefficient_draws``: the structured draws with the exact correction."""

    def draws(est, n_epsilon):
        stats_ = est.released_statistics_
        path, J, step = inf._path(est, stats_)
        H = np.asarray(stats_["hessian"], float)
        rng = np.random.default_rng(np.frombuffer(H.tobytes(), dtype=np.uint32)[:64])
        floor = inf.posterior_floor(n_epsilon)
        H_star = inf._structured_draws(est, stats_, J, rng, inf.POSTERIOR_DRAWS, floor)
        AK, cov = inf._recursion(est, H_star, step, np.asarray(stats_["gradients"]).shape[0])
        xi = (inf._cholesky(cov) @ rng.standard_normal((len(AK), H.shape[0], 1)))[..., 0]
        moved = path[-1] - path[0] - xi
        theta = path[0] + np.linalg.solve(np.eye(H.shape[0]) - AK, moved[..., None])[..., 0]
        return theta[:, J:] / inf._half(est), None

    inf._coefficient_draws = draws


def _preconditioner(H, baseline, s_h, s_b, J):
    """The inverse of the block-diagonal curvature estimate the ``precond`` fit steps
    with."""
    from skdp.utils._inference import shrunk_spectrum

    p = H.shape[0]
    w_h, w_b = 1.0 / s_h**2, 1.0 / s_b**2
    D = (np.diag(H)[:J] * w_h + np.maximum(baseline[:J], 1.0) * w_b) / (w_h + w_b)
    M = np.zeros((p, p))
    M[np.arange(J), np.arange(J)] = np.maximum(D, max(1.0, s_h, s_b))
    M[J:, J:] = shrunk_spectrum(H[J:, J:], s_h, s_h * np.sqrt(p - J))
    return np.linalg.inv(M)


def _precond(inf):
    """The fit steps with :func:`_preconditioner`; the interval recomputes that path."""
    import skdp.survival._cox_fit as fit

    def release_hessian_inverse(data, alpha, beta, plan, rng, record=None):
        size = data.n_intervals + data.Z.shape[1]
        H = fit.hessian_sum(data, alpha, beta, plan.sensitivities["hessian"])
        H = H + fit._symmetric_noise(size, plan.sigma_hessian, rng)
        record["hessian"] = H.copy()
        s_h, s_b = plan.sigma_hessian, plan.sigma_baseline
        return _preconditioner(H, record["baseline"], s_h, s_b, data.n_intervals)

    def floored_inverse(est, H):
        J = np.asarray(est.time_grid_).size - 1
        base = np.asarray(est.released_statistics_["baseline"], float)
        noise = est.noise_scale_
        return _preconditioner(H, base, float(noise["hessian"]), float(noise["baseline"]), J)

    fit.release_hessian_inverse = release_hessian_inverse
    inf._floored_inverse = floored_inverse


def _union(inf, upper_n_epsilon=3000.0):
    """``posterior_interval``: the union with the exact-correction draws up to a
    released ``n epsilon`` of ``upper_n_epsilon``."""
    from skdp.utils._inference import draws_p

    shipped = inf._coefficient_draws

    def posterior_interval(est, alpha):
        ne = inf._released_n_epsilon(est)
        draws, null = shipped(est, ne)
        lower, upper = np.quantile(draws, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
        q16, centre, q84 = np.quantile(draws, [0.158655, 0.5, 0.841345], axis=0)
        p = draws_p(draws if null is None else null)
        if inf.EXACT_N_EPSILON <= ne < upper_n_epsilon:
            kept, inf.EXACT_N_EPSILON = inf.EXACT_N_EPSILON, np.inf
            try:
                exact, _ = shipped(est, ne)
            finally:
                inf.EXACT_N_EPSILON = kept
            lo2, up2 = np.quantile(exact, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
            lower, upper = np.minimum(lower, lo2), np.maximum(upper, up2)
            p = np.maximum(p, draws_p(exact))
        return (q84 - q16) / 2.0, lower, upper, p, centre

    inf.posterior_interval = posterior_interval


DESIGNS = {
    "shipped": [],
    "factor": [_factor],
    "factor_exact": [_factor, _exact_structured],
    "precond": [_precond],
    "union": [_union],
}


#: the design this worker process runs (a pool serves one cell and one design)
_APPLIED = []


def one(args):
    """One cohort under one design (the replacements live in this worker only)."""
    import skdp.survival._cox_inference as inf

    design, rep_args = args
    if not _APPLIED:
        for change in DESIGNS[design.removesuffix("_inf")]:
            change(inf)
        _APPLIED.append(design)
    assert _APPLIED == [design], "one design per worker process"
    return one_rep(rep_args)


def run_cell(n, eps, d, simulator, design, reps, jobs, seed0):
    """The row of one cell and design."""
    options = {"simulator": simulator, "inference": design.endswith("_inf")}
    args = [(design, (n, eps, d, _seed(r, seed0), 0.05, options)) for r in range(reps)]
    out = map_reps(one, args, jobs)
    coef = np.array([o[0] for o in out])
    lo, hi = np.array([o[1] for o in out]), np.array([o[2] for o in out])
    p = np.array([o[3] for o in out])[:, -1]
    truth = np.asarray(TRUTHS[simulator][d], float)
    cover = ((lo <= truth) & (truth <= hi)).mean(axis=0)
    width = (hi - lo).mean(axis=0) / (2 * 1.96 * coef.std(axis=0))
    rmse = float(np.sqrt(((coef - truth) ** 2).mean()))
    ks = stats.kstest(p, "uniform").pvalue
    print(
        f"{simulator:11s} {n:6d} {eps:4.1f} {d:2d} {design:13s} {cover.min():6.3f} "
        f"{cover.mean():6.3f} {width.max():6.2f} {(hi - lo).mean():7.3f} {rmse:6.3f} "
        f"{(p < 0.05).mean():6.3f} {ks:6.3f}",
        flush=True,
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed0", type=int, default=0)
    ap.add_argument("--designs", nargs="+", default=["shipped", "precond_inf", "union"])
    ap.add_argument("--cells", nargs="+", default=["500/3/5", "2000/1/5"])
    ap.add_argument("--simulators", nargs="+", default=["weibull", "exponential"])
    args = ap.parse_args()
    import torch

    print(f"load {os.getloadavg()[0]:.1f}, torch threads {torch.get_num_threads()}")
    print(
        "simulator        n  eps  d design         worst   mean  width abswidth   rmse"
        "    rej   KS p"
    )
    for simulator in args.simulators:
        for cell in args.cells:
            n, eps, d = cell.split("/")
            for design in args.designs:
                run_cell(
                    int(n), float(eps), int(d), simulator, design, args.reps, args.jobs, args.seed0
                )


if __name__ == "__main__":
    main()

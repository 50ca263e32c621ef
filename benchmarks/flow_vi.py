"""DP-NF-VI on the simulated nonlinear model (paper §4.2, spec dp_flow.md §5.5, Table 6 shape).

Prints posterior means, SDs and correlations of beta for

* ``orig``: the exact flat-prior posterior (Laplace approximation, as in spec §5.5),
* ``NF-VI``: :class:`skdp.sampling.DPFlowVI` with ``epsilon=inf``,
* ``eps=50, 5, 2, 1`` (delta 1e-5): DP-NF-VI,

each cell the mean over ``--runs`` seeds with the SD over seeds in parentheses, plus the noise
multiplier, the paper's CLT mu and the RDP epsilon actually spent.

Default: a reduced configuration that runs in about 10 minutes on a 2-core CPU (n = 6000 subjects,
q = 500/6000 as in the paper, but fewer steps and MC draws, and a larger learning rate).
``--paper`` uses the paper's "Reg DP-VI" settings (T = 8000, m = 1000, RMSprop lr 0.01, decay
0.999, C = 10, 1 MADE block with 10 hidden units; an affine layer replaces the paper's
BatchNorm, spec README §2 row 13) and takes hours on a CPU.

Usage::

    python benchmarks/flow_vi.py                # reduced, ~10 min on 2 busy CPU cores
    python benchmarks/flow_vi.py --runs 5 --paper
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import optimize

from skdp.datasets import (
    NONLINEAR_BETA_TRUE,
    NonlinearRepeatedMeasuresLogLik,
    make_nonlinear_repeated_measures,
)
from skdp.datasets import nonlinear_log_likelihood as np_log_lik
from skdp.sampling import DPFlowVI

PAIRS = [(i, j) for i in range(5) for j in range(i + 1, 5)]


def laplace_posterior(X):
    """Flat-prior Laplace approximation (MLE, inverse observed information)."""
    beta0 = np.asarray(NONLINEAR_BETA_TRUE)

    def nll(b):
        return -np_log_lik(X, b).sum()

    b_hat = optimize.minimize(nll, beta0, method="BFGS", options={"gtol": 1e-8}).x
    h = 1e-4
    H = np.empty((5, 5))
    eye = np.eye(5) * h
    for i in range(5):
        for j in range(5):
            H[i, j] = (
                nll(b_hat + eye[i] + eye[j])
                - nll(b_hat + eye[i] - eye[j])
                - nll(b_hat - eye[i] + eye[j])
                + nll(b_hat - eye[i] - eye[j])
            ) / (4 * h * h)
    cov = np.linalg.inv(H)
    return b_hat, cov


def summarise(mean, cov):
    sd = np.sqrt(np.diag(cov))
    corr = cov / np.outer(sd, sd)
    return np.concatenate([mean, sd, [corr[i, j] for i, j in PAIRS]])


def row_names():
    names = [f"mean b{i}" for i in range(5)] + [f"SD b{i}" for i in range(5)]
    return names + [f"corr b{i},b{j}" for i, j in PAIRS]


def fit_one(X, epsilon, seed, cfg):
    vi = DPFlowVI(
        log_lik=NonlinearRepeatedMeasuresLogLik(),
        n_params=5,
        epsilon=epsilon,
        delta=1e-5,
        max_grad_norm=cfg["C"],
        batch_size=500,
        n_iter=cfg["n_iter"],
        n_mc=cfg["n_mc"],
        n_layers=1,
        hidden_size=10,
        optimizer=cfg["optimizer"],
        learning_rate=cfg["lr"],
        learning_rate_decay=cfg["decay"],
        device=cfg["device"],
        dtype="float32",
        random_state=seed,
    ).fit(X)
    S = vi.sample(cfg["n_draws"], random_state=seed + 1000)
    return summarise(S.mean(0), np.cov(S.T)), vi


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--paper", action="store_true", help="the paper's full settings")
    ap.add_argument("--n-iter", type=int, default=None)
    ap.add_argument("--n-mc", type=int, default=None)
    ap.add_argument("--eps", type=float, nargs="*", default=[50.0, 5.0, 2.0, 1.0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest here)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--optimizer", default="rmsprop", choices=["rmsprop", "adam", "sgd"])
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--decay", type=float, default=None)
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    if args.paper:
        cfg = dict(n_iter=8000, n_mc=1000, lr=0.01, decay=0.999, C=10.0)
    else:
        cfg = dict(n_iter=2000, n_mc=50, lr=0.05, decay=0.999, C=10.0)
    if args.n_iter:
        cfg["n_iter"] = args.n_iter
    if args.n_mc:
        cfg["n_mc"] = args.n_mc
    if args.lr:
        cfg["lr"] = args.lr
    if args.decay:
        cfg["decay"] = args.decay
    cfg["optimizer"] = args.optimizer
    cfg.update(device=args.device, n_draws=20000)

    X = make_nonlinear_repeated_measures(6000, random_state=args.seed)
    b_hat, cov = laplace_posterior(X)
    columns = {"orig": [summarise(b_hat, cov)]}
    info = {}
    settings = [("NF-VI", math.inf)] + [(f"eps={e:g}", e) for e in args.eps]
    print(
        f"n=6000, q=500/6000, T={cfg['n_iter']}, m={cfg['n_mc']}, {cfg['optimizer']} "
        f"lr={cfg['lr']} decay={cfg['decay']}, C={cfg['C']}, runs={args.runs}",
        flush=True,
    )
    for name, eps in settings:
        rows = []
        t0 = time.time()
        for r in range(args.runs):
            summ, vi = fit_one(X, eps, args.seed + 1 + r, cfg)
            rows.append(summ)
        info[name] = (vi.noise_multiplier_, vi.mu_gdp_, vi.epsilon_spent_, time.time() - t0)
        columns[name] = rows
        print(
            f"  {name}: sigma={vi.noise_multiplier_:.3f} mu_CLT={vi.mu_gdp_:.3f} "
            f"eps_spent(RDP)={vi.epsilon_spent_:.3f} ({(time.time() - t0) / args.runs:.0f} s/run)",
            flush=True,
        )

    header = f"{'':14s}" + "".join(f"{c:>20s}" for c in columns)
    print()
    print(header)
    for k, rname in enumerate(row_names()):
        cells = []
        for c, rows in columns.items():
            vals = np.array([r[k] for r in rows])
            if c == "orig":
                cells.append(f"{vals[0]:>20.4f}")
            else:
                cells.append(f"{vals.mean():>11.4f} ({vals.std():.4f})")
        print(f"{rname:14s}" + "".join(cells))
    return columns, info


if __name__ == "__main__":
    main()

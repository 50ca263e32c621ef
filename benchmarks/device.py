"""Default fits on the CPU against CUDA: does a GPU speed up skdp's tabular-sized models?

Every torch estimator at its defaults (only ``device`` changes), fitted once on the CPU
and once on CUDA in the same run, on the problems of the other benchmarks:

* ``DPFlowDensity`` and ``DPGANSynthesizer`` on the simulated 10-column clinical table of
  ``benchmarks/synthesizers.py`` (``--n`` rows, default 10,000; ε = 1, δ = 1e-5);
* ``ExpMFlowClassifier`` on the logistic simulator of ``benchmarks/expm_flow.py``
  (``--n`` rows, d = 10, ε = 1);
* ``DPFlowVI`` as the Bayesian logistic regression of ``benchmarks/flow_vi_logistic.py``
  (2,000 rows, d = 10, ε = 1, δ = 1/n²).

The CPU fit uses the estimators' own thread rule (``n_jobs=None``: one thread for these
model sizes). Each CUDA timing follows a warm-up of the CUDA context, so it counts the
fit's own work only. Without CUDA the script times the CPU alone.

Usage::

    python benchmarks/device.py            # CPU and, when available, CUDA
    python benchmarks/device.py --n 2000
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import synthesizers as S  # noqa: E402
from expm_flow import logit  # noqa: E402
from flow_vi_logistic import LogisticLogLik, standard_normal_prior  # noqa: E402


def _synthesizer(module, name):
    """A default fit of a tabular synthesizer on the clinical table (ε = 1)."""

    def problem(n):
        cls = getattr(importlib.import_module(module), name)
        df, bounds, cats = S.DATASETS["clinical"](n=n)

        def fit(device):
            cls(
                epsilon=1.0,
                delta=1e-5,
                bounds=bounds,
                categories=cats,
                device=device,
                random_state=0,
            ).fit(df)

        return fit

    return problem


def _expm(n):
    from skdp.linear_model import ExpMFlowClassifier

    X, _, y, _ = logit(0, n, 10)

    def fit(device):
        ExpMFlowClassifier(epsilon=1.0, classes=[0, 1], device=device, random_state=0).fit(X, y)

    return fit


def _vi(n):
    from skdp.sampling import DPFlowVI

    X, _, y, _ = logit(0, 2000, 10)
    data = np.column_stack([X, y])

    def fit(device):
        DPFlowVI(
            log_lik=LogisticLogLik(),
            log_prior=standard_normal_prior,
            n_params=11,
            epsilon=1.0,
            delta=1.0 / 2000**2,
            device=device,
            random_state=0,
        ).fit(data)

    return fit


PROBLEMS = {
    "DPFlowDensity": _synthesizer("skdp.density", "DPFlowDensity"),
    "DPGANSynthesizer": _synthesizer("skdp.synthesis", "DPGANSynthesizer"),
    "ExpMFlowClassifier": _expm,
    "DPFlowVI": _vi,
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--estimators", default=",".join(PROBLEMS))
    args = parser.parse_args(argv)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    if "cuda" in devices:
        torch.ones(1, device="cuda").sum().item()  # the context, outside the timings
        name = torch.cuda.get_device_name(0)
    else:
        name = "none"
    print(
        f"# torch {torch.__version__}, CUDA device: {name}, CPU cores {os.cpu_count()}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print("| estimator | rows | CPU fit (s) | CUDA fit (s) | CUDA / CPU |")
    print("|---|---|---|---|---|")
    for est in args.estimators.split(","):
        fit = PROBLEMS[est](args.n)
        times = {}
        for dev in devices:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                fit(dev)
                if dev == "cuda":
                    torch.cuda.synchronize()
                times[dev] = time.perf_counter() - t0
        rows = 2000 if est == "DPFlowVI" else args.n
        cuda = times.get("cuda")
        ratio = f"{cuda / times['cpu']:.2f}" if cuda is not None else "n/a"
        cuda_s = f"{cuda:.1f}" if cuda is not None else "n/a"
        print(f"| {est} | {rows} | {times['cpu']:.1f} | {cuda_s} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()

"""Speed of one DP-SGD step for the paper-sized MAF: non-private vs skdp vs Opacus.

The model is the DP-NF paper's EHR density flow (spec dp_flow.md §1.6): a MAF of 15 MADE
blocks, one hidden layer of 200 units, d = 19 (about 175,000 parameters), without BatchNorm.
Every configuration processes a batch of exactly ``B`` records per step (``q = 1`` over ``B``
records, so Poisson sampling returns all of them) and runs:

(a) ``non-private``: ordinary autograd on the mean negative log-likelihood, Adam step;
(b) ``skdp``: :class:`skdp.training.DPSGDTrainer.step` with the default ``method="auto"``,
    i.e. the exact book-keeping (ghost) clipping path for the MAF's masked linear layers
    (flat clipping, noise once on the sum, / expected batch, Adam step, RDP accountant
    step); ``skdp-vmap`` is the same step with ``vmap(grad)`` per-sample gradients;
(c) ``opacus``: Opacus ``GradSampleModule`` + ``DPOptimizer`` (Adam), with a registered
    grad sampler for the MADE's masked linear layer (Opacus has none for it:
    ``grad_sample = backprops^T activations * mask``).

Each (method, batch size) runs in its own subprocess so that its peak memory can be read
(``ru_maxrss`` growth over the timed part on CPU; ``torch.cuda.max_memory_allocated`` on
CUDA). Opacus is a benchmark-only dependency (``pip install --no-deps opacus``); if it is
missing, (c) is reported as unavailable.

Usage::

    python benchmarks/dpsgd_speed.py            # B = 64 ... 1024
    python benchmarks/dpsgd_speed.py --quick    # B = 64, 256; shorter timing
    python benchmarks/dpsgd_speed.py --device cuda
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

METHODS = ("non-private", "skdp", "skdp-vmap", "opacus")


def _rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _build(device, dtype, d=19, n_layers=15, hidden=200, seed=0):
    import torch

    from skdp.flows import LogProbModule, make_flow

    gen = torch.Generator().manual_seed(seed)
    flow = make_flow("maf", d, n_layers=n_layers, hidden_features=(hidden,), generator=gen)
    module = LogProbModule(flow).to(device=device, dtype=dtype)
    x = torch.randn(4096, d, generator=gen).to(device=device, dtype=dtype)
    return module, x


def _nll(lp):
    return -lp


def worker(method, batch, device_name, seconds, threads):
    import torch

    torch.set_num_threads(threads)
    from skdp.training import DPSGDTrainer
    from skdp.utils._torch import resolve_device

    device = resolve_device(device_name)
    torch.manual_seed(0)
    module, xs = _build(device, torch.float32)
    x = xs[:batch].contiguous() if batch <= xs.shape[0] else torch.randn(batch, 19, device=device)
    n_params = sum(p.numel() for p in module.parameters())

    if method == "non-private":
        opt = torch.optim.Adam(module.parameters(), lr=1e-4)

        def step():
            opt.zero_grad(set_to_none=True)
            (-module(x)).mean().backward()
            opt.step()

    elif method in ("skdp", "skdp-vmap"):
        trainer = DPSGDTrainer(
            module,
            _nll,
            n_samples=batch,
            sample_rate=1.0,
            noise_multiplier=1.0,
            max_grad_norm=1.0,
            learning_rate=1e-4,
            random_state=0,
            method="auto" if method == "skdp" else "vmap",
        )

        def step():
            trainer.step((x,))

    elif method == "opacus":
        try:
            from opacus import GradSampleModule
            from opacus.grad_sample import register_grad_sampler
            from opacus.optimizers import DPOptimizer
        except ImportError as exc:  # pragma: no cover - optional dependency
            return {"error": f"opacus unavailable: {exc}"}
        from skdp.flows import MaskedLinear

        @register_grad_sampler(MaskedLinear)
        def _masked_linear_grad_sample(layer, activations, backprops):
            a = activations[0]
            out = {}
            if layer.weight.requires_grad:
                out[layer.weight] = torch.einsum("n...i,n...j->nij", backprops, a) * layer.mask
            if layer.bias.requires_grad:
                out[layer.bias] = torch.einsum("n...k->nk", backprops)
            return out

        # Opacus refuses trainable layers that hold buffers: keep the (constant) mask as a
        # plain tensor attribute instead; the forward pass is unchanged.
        for sub in module.modules():
            if isinstance(sub, MaskedLinear):
                mask = sub._buffers.pop("mask")
                object.__setattr__(sub, "mask", mask)
        gsm = GradSampleModule(module)
        opt = DPOptimizer(
            torch.optim.Adam(gsm.parameters(), lr=1e-4),
            noise_multiplier=1.0,
            max_grad_norm=1.0,
            expected_batch_size=batch,
        )

        def step():
            opt.zero_grad(set_to_none=True)
            (-gsm(x)).mean().backward()
            opt.step()

    else:
        raise ValueError(method)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    for _ in range(2):  # warm-up (also compiles vmap plans, allocates optimizer state)
        step()
    sync()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    rss0 = _rss_mb()
    n, t0 = 0, time.perf_counter()
    while True:
        step()
        n += 1
        sync()
        dt = time.perf_counter() - t0
        if (dt > seconds and n >= 3) or n >= 200:
            break
    if device.type == "cuda":
        mem = torch.cuda.max_memory_allocated() / 2**20
    else:
        mem = max(0.0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss0)
    return {"steps_per_s": n / dt, "mem_mb": mem, "n_params": n_params, "n_steps": n}


def run_one(method, batch, device, seconds, threads):
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        method,
        str(batch),
        device,
        str(seconds),
        str(threads),
    ]
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batches", type=int, nargs="*")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch intra-op threads per run (default 1: stable timings on a shared machine)",
    )
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        method, batch, device, seconds, threads = args.worker
        print(json.dumps(worker(method, int(batch), device, float(seconds), int(threads))))
        return
    batches = args.batches or ([64, 256] if args.quick else [64, 128, 256, 512, 1024])
    seconds = 1.0 if args.quick else 3.0
    import torch

    print(
        f"# DP-SGD step speed, paper-sized MAF (K=15, H=200, d=19), device={args.device}, "
        f"torch {torch.__version__}, threads={args.threads}"
    )
    rows = []
    for b in batches:
        res = {m: run_one(m, b, args.device, seconds, args.threads) for m in METHODS}
        rows.append((b, res))
    n_params = next((r["n_params"] for _, res in rows for r in res.values() if "n_params" in r), 0)
    print(f"# parameters: {n_params:,}; memory = peak growth during timed steps (MB)")
    head = (
        f"{'B':>5} | {'non-priv st/s':>13} | {'skdp st/s':>9} | {'vmap st/s':>9} | "
        f"{'opacus st/s':>11} | {'skdp/non-priv time':>18} | {'opacus/skdp time':>16} | "
        f"{'mem np':>7} | {'mem skdp':>8} | {'mem vmap':>8} | {'mem opacus':>10}"
    )
    print(head)
    print("-" * len(head))

    def fmt(r, key, spec):
        return format(r[key], spec) if key in r else "n/a"

    for b, res in rows:
        a, s, v, o = res["non-private"], res["skdp"], res["skdp-vmap"], res["opacus"]
        r1 = (
            f"{a['steps_per_s'] / s['steps_per_s']:.2f}x"
            if "steps_per_s" in a and "steps_per_s" in s
            else "n/a"
        )
        r2 = (
            f"{s['steps_per_s'] / o['steps_per_s']:.2f}x"
            if "steps_per_s" in o and "steps_per_s" in s
            else "n/a"
        )
        print(
            f"{b:>5} | {fmt(a, 'steps_per_s', '13.2f'):>13} | {fmt(s, 'steps_per_s', '9.2f'):>9} | "
            f"{fmt(v, 'steps_per_s', '9.2f'):>9} | "
            f"{fmt(o, 'steps_per_s', '11.2f'):>11} | {r1:>18} | {r2:>16} | "
            f"{fmt(a, 'mem_mb', '7.0f'):>7} | {fmt(s, 'mem_mb', '8.0f'):>8} | "
            f"{fmt(v, 'mem_mb', '8.0f'):>8} | {fmt(o, 'mem_mb', '10.0f'):>10}"
        )
    for b, res in rows:
        for m, r in res.items():
            if "error" in r:
                print(f"# B={b} {m}: {r['error'][:300]}")
    print(
        "# skdp/non-priv time = (skdp step time) / (non-private step time): target <= 2x; "
        "opacus/skdp time > 1 means skdp is faster."
    )


if __name__ == "__main__":
    main()

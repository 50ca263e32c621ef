"""Benchmark of ``skdp.accounting``: epsilon and run time side by side with dp-accounting.

For a grid of (sample rate q, noise multiplier sigma, steps T) at delta = 1e-5 (improved
conversion) the table prints:

* ``skdp int``  -- skdp on the integer orders 2..256 (+512);
* ``dpacc int`` -- dp-accounting's ``RdpAccountant`` on the same orders (must agree);
* ``skdp def``  -- skdp on its default grid (TF-Privacy grid united with 2..256; exact
  fractional orders);
* ``dpacc def`` -- dp-accounting on *its* default grid (0.1-spaced fractional orders,
  which its series sometimes fails to evaluate and then drops, with a logged warning);
* ``skdp@dpacc`` -- skdp's exact values on dp-accounting's default grid;
* the time of each call (median of ``--repeats``), and the ratio dp-accounting / skdp
  measured in this run.

Then the time of ``calibrate_noise_multiplier`` (default grid) for a few targets.

Then the PLD accountant (``accountant="pld"``) on four usual DP-SGD settings and the
same grid: skdp's RDP epsilon (default grid), skdp's PLD epsilon alone, dp-accounting's
PLD (``value_discretization_interval=1e-4``), their relative difference, how much
tighter than RDP the PLD is, and the times; then PLD calibration times (run it under
``taskset -c 0`` with ``OMP_NUM_THREADS=1`` for one-core numbers).

Run ``python benchmarks/accounting.py`` (a few minutes; ``--quick`` for a smaller grid).
dp-accounting is optional: without it only the skdp columns are printed.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import statistics
import time

from skdp.accounting import PLDAccountant, calibrate_noise_multiplier, compute_epsilon

try:
    import dp_accounting
    from dp_accounting import rdp as dp_rdp
    from dp_accounting.pld import pld_privacy_accountant

    logging.getLogger("absl").setLevel(logging.ERROR)  # its dropped-order warnings
except ImportError:  # pragma: no cover
    dp_accounting = None

INTEGER_ORDERS = list(range(2, 257)) + [512]
DELTA = 1e-5


def timed(fn, repeats):
    times, value = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return value, statistics.median(times)


def skdp_eps(sigma, q, steps, orders=None):
    return compute_epsilon(
        noise_multiplier=sigma, sample_rate=q, steps=steps, delta=DELTA, orders=orders
    )


def dpacc_eps(sigma, q, steps, orders=None):
    acc = dp_rdp.RdpAccountant(orders) if orders is not None else dp_rdp.RdpAccountant()
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    acc.compose(event, steps)
    return acc.get_epsilon(DELTA)


def skdp_pld_eps(sigma, q, steps):
    acc = PLDAccountant().step(noise_multiplier=sigma, sample_rate=q, num_steps=steps)
    return acc.get_epsilon_pld(DELTA)


def dpacc_pld_eps(sigma, q, steps, vdi=1e-4):
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=vdi)
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    acc.compose(event, steps)
    return acc.get_epsilon(DELTA)


# four usual DP-SGD settings (q, sigma, T)
ISSUE_ROWS = [(0.001, 0.8, 1000), (0.01, 1.1, 1000), (0.004267, 1.0151, 14062), (0.04, 1.5, 2250)]


def pld_section(grid, repeats):
    header = (
        f"{'q':>8} {'sigma':>6} {'T':>6} | {'skdp RDP':>9} {'skdp PLD':>9} {'dpacc PLD':>9} "
        f"{'PLD/dpacc':>10} {'vs RDP':>7} | {'t skdp PLD':>10} {'t dpacc PLD':>11}"
    )
    print(f"\nPLD accountant, delta = {DELTA:g}; times in ms (median of {repeats})")
    print(header)
    print("-" * len(header))
    for q, sigma, steps in grid:
        rdp = skdp_eps(sigma, q, steps)
        if rdp > 60:  # dp-accounting's PLD cost grows with epsilon / 1e-4
            continue
        pld, t_pld = timed(lambda: skdp_pld_eps(sigma, q, steps), repeats)  # noqa: B023
        line = f"{q:8.4g} {sigma:6.3g} {steps:6d} | {rdp:9.4f} {pld:9.4f} "
        if dp_accounting is not None:
            ref, t_ref = timed(lambda: dpacc_pld_eps(sigma, q, steps), 1)  # noqa: B023
            line += f"{ref:9.4f} {100 * (pld / ref - 1):+9.3f}% "
        else:
            line += f"{'-':>9} {'-':>10} "
        line += f"{100 * (1 - pld / rdp):6.1f}% | {1e3 * t_pld:10.1f} "
        line += f"{1e3 * t_ref:11.1f}" if dp_accounting is not None else f"{'-':>11}"
        print(line, flush=True)
    print("(PLD/dpacc: at epsilon < 0.5 dp-accounting's 1e-4 grid is itself a few tenths of a")
    print(" percent pessimistic; compare with value_discretization_interval=1e-5 there)")

    print("\ncalibrate_noise_multiplier(accountant='pld') vs 'rdp', time in s:")
    for eps, q, steps in [
        (1.0, 0.01, 1000),
        (3.0, 256 / 60000, 14062),
        (8.0, 0.04, 2250),
        (1.0, 0.001, 20_000),
        (3.0, 0.01, 20_000),
        (8.0, 0.04, 20_000),
    ]:
        kw = {"epsilon": eps, "delta": DELTA, "sample_rate": q, "steps": steps}
        s_pld, t_pld = timed(
            lambda kw=kw: calibrate_noise_multiplier(accountant="pld", **kw), repeats
        )
        s_rdp, t_rdp = timed(lambda kw=kw: calibrate_noise_multiplier(**kw), repeats)
        print(
            f"  eps={eps:g} q={q:.4g} T={steps}: sigma pld {s_pld:.4f} ({t_pld:.2f} s), "
            f"rdp {s_rdp:.4f} ({t_rdp:.2f} s): {100 * (1 - s_pld / s_rdp):.1f}% less noise"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller grid")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pld-only", action="store_true", help="only the PLD section")
    args = parser.parse_args(argv)

    if args.quick:
        grid = list(itertools.product([1e-3, 0.04], [0.8, 1.5], [1000]))
    else:
        grid = list(
            itertools.product([1e-3, 0.01, 0.04, 0.5], [0.6, 1.0, 1.5, 7.36], [100, 10_000])
        )
        grid += [(1 / 12, 1.3, 8000), (0.1, 0.5, 100), (1.0, 1.0, 1)]
    if args.pld_only:
        pld_section(ISSUE_ROWS + grid, args.repeats)
        return
    dpdefault = None
    if dp_accounting is not None:
        dpdefault = list(dp_rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS)

    header = (
        f"{'q':>8} {'sigma':>6} {'T':>6} | {'skdp int':>9} {'dpacc int':>9} | "
        f"{'skdp def':>9} {'dpacc def':>9} {'skdp@dpacc':>10} | "
        f"{'t skdp int':>10} {'t dpacc int':>11} {'ratio':>6} | "
        f"{'t skdp def':>10} {'t dpacc def':>11} {'ratio':>6}"
    )
    print(f"delta = {DELTA:g}, improved conversion; times in ms (median of {args.repeats})")
    print(header)
    print("-" * len(header))
    ratios_int, ratios_def = [], []
    for q, sigma, steps in grid:
        s_int, t_s_int = timed(lambda: skdp_eps(sigma, q, steps, INTEGER_ORDERS), args.repeats)  # noqa: B023
        s_def, t_s_def = timed(lambda: skdp_eps(sigma, q, steps), args.repeats)  # noqa: B023
        if dp_accounting is not None:
            d_int, t_d_int = timed(lambda: dpacc_eps(sigma, q, steps, INTEGER_ORDERS), args.repeats)  # noqa: B023
            d_def, t_d_def = timed(lambda: dpacc_eps(sigma, q, steps), args.repeats)  # noqa: B023
            s_at_d = skdp_eps(sigma, q, steps, dpdefault)
            ratios_int.append(t_d_int / t_s_int)
            ratios_def.append(t_d_def / t_s_def)
            print(
                f"{q:8.4g} {sigma:6.3g} {steps:6d} | {s_int:9.4f} {d_int:9.4f} | "
                f"{s_def:9.4f} {d_def:9.4f} {s_at_d:10.4f} | "
                f"{1e3 * t_s_int:10.2f} {1e3 * t_d_int:11.2f} {t_d_int / t_s_int:6.1f} | "
                f"{1e3 * t_s_def:10.2f} {1e3 * t_d_def:11.2f} {t_d_def / t_s_def:6.1f}"
            )
        else:
            print(
                f"{q:8.4g} {sigma:6.3g} {steps:6d} | {s_int:9.4f} {'-':>9} | "
                f"{s_def:9.4f} {'-':>9} {'-':>10} | {1e3 * t_s_int:10.2f}"
            )
    if ratios_int:
        med_int, med_def = statistics.median(ratios_int), statistics.median(ratios_def)
        print(
            f"\nmedian speed ratio dp-accounting / skdp: integer orders {med_int:.1f}x, "
            f"default grids {med_def:.1f}x"
        )

    print("\ncalibrate_noise_multiplier (default grid, improved), time in ms:")
    for eps, q, steps in [(1.0, 0.01, 1000), (3.0, 256 / 60000, 14062), (8.0, 0.04, 2250)]:
        kw = {"epsilon": eps, "delta": DELTA, "sample_rate": q, "steps": steps}
        sigma, t = timed(lambda kw=kw: calibrate_noise_multiplier(**kw), args.repeats)
        check = skdp_eps(sigma, q, steps)
        print(
            f"  eps={eps:g} q={q:.4g} T={steps}: sigma={sigma:.4f} "
            f"(eps at sigma = {check:.4f}) {1e3 * t:.1f} ms"
        )

    pld_section(ISSUE_ROWS + grid, args.repeats)


if __name__ == "__main__":
    main()

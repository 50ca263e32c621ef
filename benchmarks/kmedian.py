"""Private k-median: SubsampledExpMedian against the thesis's baselines (Lantz 2016 §8.3).

Reproduces the *shape* of the thesis's experiments (spec ``lantz.md`` §6.3) on its
synthetic set-up: ``n`` public points uniform in the unit disc, a random subset of
``s = 0.3 n`` of them is the private data, ``Delta`` = diameter of the public points.
Reported: the median (and 25/75 % quantiles) of the k-median cost of the private
points over replicates (the thesis used 1,000 replicates; the default here is smaller,
see ``--replicates``), and wall-clock time per fit.

Tables
------
A (Fig. 8.3a)  k = 2: cost vs epsilon in {0.1, 1, 10, 100} for n = 100 and 1000.
B (Fig. 8.3b)  n = 1000, epsilon = 1: cost vs k in {2, 4, 8, 16}.
C (Fig. 8.3c/d) n = 1000, k = 2, epsilon = 1: cost vs m (ssem, ssem k++), em as reference.
D (Fig. 8.5)   k = 2, epsilon = 1: runtime vs n for ssemauto, em and gupta.

Methods: ``random`` / ``random k++`` (data-agnostic), ``em`` (exponential mechanism over
all C(n, k) subsets, ``n_candidates=None``), ``gupta`` (private local search),
``ssem``/``ssemauto`` (``n_candidates=m`` / ``"auto"``), ``... k++`` (k-means++ base),
``local`` (non-private 1-swap local search, best of 3), ``optimal`` (brute force, k = 2).

Run: ``python benchmarks/kmedian.py [--replicates 50] [--quick]``.

Results (``--replicates 20``; medians; 2-core machine shared with other jobs, load ~10,
so the times in table D are inflated and only their ratios matter)::

    ### A. k = 2: median cost [25 %, 75 %] vs epsilon (thesis Fig. 8.3a)

    | n | epsilon | random | gupta | ssemauto | em | optimal |
    |---|---|---|---|---|---|---|
    | 100 | 0.1 | 17.90 | 18.15 | 17.72 | 17.73 | 13.10 |
    | 100 | 1 | 18.23 | 17.91 | 16.97 | 16.29 | 13.10 |
    | 100 | 10 | 17.91 | 19.06 | 13.81 | 13.66 | 13.10 |
    | 100 | 100 | 19.45 | 14.55 | 13.74 | 13.14 | 13.10 |
    | 1000 | 0.1 | 208.14 | 201.68 | 184.78 | 175.13 | 149.37 |
    | 1000 | 1 | 186.09 | 176.80 | 157.13 | 157.60 | 149.37 |
    | 1000 | 10 | 199.96 | 168.18 | 154.57 | 150.27 | 149.37 |
    | 1000 | 100 | 204.70 | 153.89 | 154.57 | 149.37 | 149.37 |

    ### B. n = 1000, epsilon = 1: median cost vs k (thesis Fig. 8.3b)

    | k | m auto | random | random k++ | gupta | ssemauto | ssemauto k++ | local |
    |---|---|---|---|---|---|---|---|
    | 2 | 83 | 183.57 | 176.86 | 180.94 | 158.22 | 162.01 | 151.52 |
    | 4 | 166 | 133.98 | 133.83 | 135.88 | 112.92 | 116.42 | 100.29 |
    | 8 | 332 | 98.64 | 88.14 | 101.96 | 87.57 | 82.90 | 68.05 |
    | 16 | 664 | 69.46 | 61.42 | (too slow) | 65.10 | 58.95 | 45.34 |

    ### C. n = 1000, k = 2, epsilon = 1: median cost vs m (thesis Fig. 8.3c/d)

    | m | ssem | ssem k++ | em (reference) |
    |---|---|---|---|
    | 1 | 181.96 | 182.20 | 157.73 |
    | 3 | 175.15 | 167.49 | 157.73 |
    | 10 | 165.18 | 167.56 | 157.73 |
    | 30 | 163.14 | 160.03 | 157.73 |
    | 100 | 159.34 | 157.96 | 157.73 |
    | 300 | 156.30 | 157.54 | 157.73 |
    | 1000 | 158.47 | 158.43 | 157.73 |
    | 3000 | 156.66 | 158.30 | 157.73 |

    ### D. k = 2, epsilon = 1: minimum wall time per fit (thesis Fig. 8.5)

    | n | ssemauto (s) | em (s) | gupta (s) | em / ssemauto |
    |---|---|---|---|---|
    | 100 | 0.0008 | 0.0194 | 0.0204 | 24x |
    | 300 | 0.0014 | 0.2572 | 0.0459 | 181x |
    | 1000 | 0.0294 | 8.3759 | 0.5611 | 285x |

    (total 958 s, 20 replicates)

Shape against the thesis (§8.3): at epsilon = 0.1 and n = 100 no private method beats
``random`` by much; at n = 1000, epsilon >= 1, ``em`` is within ~5 % of the optimum
and ``ssemauto`` tracks ``em``; ``gupta`` is worse than both except at epsilon = 100;
``ssem`` improves with m and plateaus at the ``em`` level from m ~ 100-300; ``ssem``
is one to two orders of magnitude faster than ``em`` at n = 1000 and faster than
``gupta``. The k++ base helps for k >= 8 and is neutral or slightly worse for k <= 4.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.spatial.distance import cdist

from skdp.cluster import SubsampledExpMedian
from skdp.cluster._baselines import (
    all_subset_costs,
    gupta_local_search,
    local_search,
    random_centers,
    random_kpp_centers,
    subset_cost,
)
from skdp.mechanisms import exponential_mechanism


def disc(n, rng):
    r = np.sqrt(rng.uniform(size=n))
    t = rng.uniform(0, 2 * np.pi, size=n)
    return np.column_stack([r * np.cos(t), r * np.sin(t)])


def instance(n, seed):
    rng = np.random.default_rng(seed)
    V = disc(n, rng)
    X = V[rng.choice(n, size=int(0.3 * n), replace=False)]
    return V, X, cdist(X, V)


def ssem_cost(V, X, k, eps, m, seed, base="uniform"):
    est = SubsampledExpMedian(
        n_clusters=k, epsilon=eps, candidates=V, n_candidates=m, base=base, random_state=seed
    )
    return -est.fit(X).score(X)


def summarise(values):
    q25, q50, q75 = np.percentile(values, [25, 50, 75])
    return f"{q50:.2f} [{q25:.2f}, {q75:.2f}]"


def table(title, header, rows):
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")


def table_a(R, ns):
    header = ["n", "epsilon", "random", "gupta", "ssemauto", "em", "optimal"]
    rows = []
    for n in ns:
        res = {key: {eps: [] for eps in (0.1, 1, 10, 100)} for key in header[2:]}
        for rep in range(R):
            V, X, D = instance(n, 1000 * n + rep)
            delta = float(cdist(V, V).max())
            subsets, costs = all_subset_costs(D, 2)
            opt = costs.min()
            rng = np.random.default_rng(rep)
            for eps in (0.1, 1, 10, 100):
                res["random"][eps].append(subset_cost(D, random_centers(n, 2, rng)))
                res["gupta"][eps].append(
                    subset_cost(
                        D, gupta_local_search(D, 2, epsilon=eps, sensitivity=delta, rng=rng)
                    )
                )
                res["ssemauto"][eps].append(ssem_cost(V, X, 2, eps, "auto", rep))
                j = exponential_mechanism(-costs, epsilon=eps, sensitivity=delta, rng=rng)
                res["em"][eps].append(costs[j])
                res["optimal"][eps].append(opt)
        for eps in (0.1, 1, 10, 100):
            rows.append([n, eps] + [summarise(res[key][eps]) for key in header[2:]])
    table("A. k = 2: median cost [25 %, 75 %] vs epsilon (thesis Fig. 8.3a)", header, rows)


def table_b(R, n, ks):
    header = ["k", "m auto", "random", "random k++", "gupta", "ssemauto", "ssemauto k++", "local"]
    rows = []
    for k in ks:
        res = {key: [] for key in header[2:]}
        for rep in range(R):
            V, X, D = instance(n, 7000 + rep)
            delta = float(cdist(V, V).max())
            rng = np.random.default_rng(rep)
            res["random"].append(subset_cost(D, random_centers(n, k, rng)))
            res["random k++"].append(subset_cost(D, random_kpp_centers(V, k, rng)))
            res["gupta"].append(
                subset_cost(D, gupta_local_search(D, k, epsilon=1.0, sensitivity=delta, rng=rng))
            )
            res["ssemauto"].append(ssem_cost(V, X, k, 1.0, "auto", rep))
            res["ssemauto k++"].append(ssem_cost(V, X, k, 1.0, "auto", rep, base="kmeans++"))
            res["local"].append(subset_cost(D, local_search(D, k, rng=rng, n_restarts=3)))
        m = math.ceil(6 * k * math.log(n))
        rows.append([k, m] + [summarise(res[key]) for key in header[2:]])
    table(f"B. n = {n}, epsilon = 1: median cost vs k (thesis Fig. 8.3b)", header, rows)


def table_c(R, n, ms):
    header = ["m", "ssem", "ssem k++", "em (reference)"]
    res = {m: {"ssem": [], "ssem k++": []} for m in ms}
    em = []
    for rep in range(R):
        V, X, D = instance(n, 9000 + rep)
        delta = float(cdist(V, V).max())
        _, costs = all_subset_costs(D, 2)
        em.append(
            costs[
                exponential_mechanism(
                    -costs, epsilon=1.0, sensitivity=delta, rng=np.random.default_rng(rep)
                )
            ]
        )
        for m in ms:
            res[m]["ssem"].append(ssem_cost(V, X, 2, 1.0, m, rep))
            res[m]["ssem k++"].append(ssem_cost(V, X, 2, 1.0, m, rep, base="kmeans++"))
    rows = [
        [m, summarise(res[m]["ssem"]), summarise(res[m]["ssem k++"]), summarise(em)] for m in ms
    ]
    table(f"C. n = {n}, k = 2, epsilon = 1: median cost vs m (thesis Fig. 8.3c/d)", header, rows)


def table_d(R, ns):
    header = ["n", "ssemauto (s)", "em (s)", "gupta (s)", "em / ssemauto"]
    rows = []
    for n in ns:
        t = {"ssemauto": [], "em": [], "gupta": []}
        for rep in range(R):
            V, X, _ = instance(n, 11000 + rep)
            t0 = time.perf_counter()
            SubsampledExpMedian(epsilon=1.0, candidates=V, random_state=rep).fit(X)
            t["ssemauto"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            SubsampledExpMedian(epsilon=1.0, candidates=V, n_candidates=None, random_state=rep).fit(
                X
            )
            t["em"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            D = cdist(X, V)
            gupta_local_search(
                D,
                2,
                epsilon=1.0,
                sensitivity=float(cdist(V, V).max()),
                rng=np.random.default_rng(rep),
            )
            t["gupta"].append(time.perf_counter() - t0)
        mins = {key: min(v) for key, v in t.items()}
        rows.append(
            [
                n,
                f"{mins['ssemauto']:.4f}",
                f"{mins['em']:.4f}",
                f"{mins['gupta']:.4f}",
                f"{mins['em'] / mins['ssemauto']:.0f}x",
            ]
        )
    table("D. k = 2, epsilon = 1: minimum wall time per fit (thesis Fig. 8.5)", header, rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    args = parser.parse_args(argv)
    R = args.replicates
    t0 = time.perf_counter()
    if args.quick:
        table_a(R, [100])
        table_b(R, 200, [2, 4])
        table_c(R, 200, [1, 10, 100, 1000])
        table_d(2, [100, 200])
    else:
        table_a(R, [100, 1000])
        table_b(R, 1000, [2, 4, 8, 16])
        table_c(R, 1000, [1, 3, 10, 30, 100, 300, 1000, 3000])
        table_d(3, [100, 300, 1000])
    print(f"\n(total {time.perf_counter() - t0:.0f} s, {R} replicates)")


if __name__ == "__main__":
    main()

"""DPILPClassifier on a simulated relational task (Lantz 2016 §6.6, spec ``lantz.md`` §4.4).

The thesis learns eastbound/westbound trains from Muggleton's (1995) generator at
epsilon = 1. Here a trains-like generator draws each train with 2-4 cars, each car with
a length (short/long), body shape (5 values), roof (5 values, "none" = open),
wheels (2/3) and load shape (4 values). Trains are propositionalised per train (one
individual per row, which keeps the neighbour relation "one train"): 19 binary atoms
"some car of the train has property p", plus ``closed`` (some car has a roof) and
``many_cars`` (3 or more cars). The label is a planted theory over these atoms
(conjunctions of ``length`` atoms, a disjunction for several clauses), drawn at random
per replicate (atoms weighted by frequency^length) among theories whose positive
rate lies in [0.3, 0.7] so that the naive
"majority" guess is weak. The non-private learner (epsilon = inf) recovers the theory
exactly, as in the thesis.

Tables (accuracy on 5,000 fresh test trains, mean over replicates; epsilon = 1):

A (Fig. 6.2)   one clause of length l in {1, 2, 3, 4}: smart vs naive search vs n.
B (Fig. 6.3a)  c clauses of 3 atoms, c in {1, 2, 3}, vs one clause of 6 atoms, vs n.
C (Fig. 6.3b)  error reduction over the majority guess as the number of clauses grows.

Run: ``python benchmarks/ilp.py [--replicates 20] [--quick]``.

Results (``--replicates 10``, mean test accuracy, epsilon = 1)::

    ### A. one clause, epsilon = 1: test accuracy vs n (thesis Fig. 6.2)

    | clause length | n | smart | naive | eps=inf | majority |
    |---|---|---|---|---|---|
    | 1 | 100 | 0.623 | 0.718 | 1.000 | 0.561 |
    | 1 | 1000 | 1.000 | 1.000 | 1.000 | 0.559 |
    | 1 | 10000 | 1.000 | 1.000 | 1.000 | 0.558 |
    | 1 | 100000 | 1.000 | 1.000 | 1.000 | 0.556 |
    | 2 | 100 | 0.575 | 0.536 | 0.999 | 0.559 |
    | 2 | 1000 | 0.801 | 0.590 | 1.000 | 0.560 |
    | 2 | 10000 | 1.000 | 0.999 | 1.000 | 0.561 |
    | 2 | 100000 | 1.000 | 1.000 | 1.000 | 0.559 |
    | 3 | 100 | 0.524 | 0.568 | 0.999 | 0.603 |
    | 3 | 1000 | 0.764 | 0.568 | 1.000 | 0.605 |
    | 3 | 10000 | 0.954 | 0.635 | 1.000 | 0.603 |
    | 3 | 100000 | 0.999 | 0.999 | 1.000 | 0.605 |
    | 4 | 100 | 0.495 | 0.666 | 0.998 | 0.649 |
    | 4 | 1000 | 0.634 | 0.670 | 1.000 | 0.651 |
    | 4 | 10000 | 0.916 | 0.668 | 1.000 | 0.650 |
    | 4 | 100000 | 1.000 | 0.858 | 1.000 | 0.649 |

    ### B. several clauses, epsilon = 1: test accuracy vs n (thesis Fig. 6.3a)

    | target | n | smart | eps=inf | majority |
    |---|---|---|---|---|
    | 1 x 3 atoms | 1000 | 0.764 | 1.000 | 0.605 |
    | 1 x 3 atoms | 10000 | 0.954 | 1.000 | 0.603 |
    | 1 x 3 atoms | 100000 | 0.999 | 1.000 | 0.605 |
    | 2 x 3 atoms | 1000 | 0.651 | 0.999 | 0.546 |
    | 2 x 3 atoms | 10000 | 0.703 | 0.999 | 0.542 |
    | 2 x 3 atoms | 100000 | 0.937 | 0.986 | 0.544 |
    | 3 x 3 atoms | 1000 | 0.636 | 0.947 | 0.622 |
    | 3 x 3 atoms | 10000 | 0.735 | 0.967 | 0.623 |
    | 3 x 3 atoms | 100000 | 0.903 | 0.964 | 0.623 |
    | 1 x 6 atoms | 1000 | 0.642 | 1.000 | 0.689 |
    | 1 x 6 atoms | 10000 | 0.654 | 1.000 | 0.687 |
    | 1 x 6 atoms | 100000 | 0.997 | 1.000 | 0.685 |

    ### C. error reduction over the majority guess, epsilon = 1 (thesis Fig. 6.3b)

    | target | n = 1000 | n = 10000 | n = 100000 |
    |---|---|---|---|
    | 1 x 3 atoms | 40 % | 88 % | 100 % |
    | 2 x 3 atoms | 23 % | 35 % | 86 % |
    | 3 x 3 atoms | 4 % | 30 % | 74 % |
    | 1 x 6 atoms | -15 % | -11 % | 99 % |

    (total 1005 s, 10 replicates)

Shape against the thesis (§6.6): with epsilon = inf the learner is (near) perfect;
at epsilon = 1 accuracy rises with n and falls with the clause length; the smart
search (Alg. 4) beats the naive one (Alg. 3) for clauses of 2-4 atoms at moderate n.
The naive search here is the spec's tight variant (budget split over the
``sum_{i<=l} C(|H_b|, i)`` clauses of length <= l, not the thesis's ``2^|H_b|``), so it
is competitive for length-1 clauses (20 queries against smart's 1 + 19 at half the
budget each) and at n = 100000. Two clauses of 3 atoms beat one clause of 6 atoms up
to n = 10000 (thesis Fig. 6.3a), and the error reduction shrinks as more clauses share
the budget (Fig. 6.3b). A theory is not always better than the majority guess at small
n: the noisy coverage that admits a clause is itself noisy.

The columns above are the thesis's clause choice (``clause_score="noisy"``). The last
column ("noise-aware") is the default, ``clause_score="noise_aware"``: the same noisy
counts and budget, each clause ranked by its noisy coverage minus about the median of
the largest noise error of its level. ``--quick --replicates 40`` (2 shared cores, load
average about 1, ``OMP_NUM_THREADS=1``), thesis's smart search / noise-aware:

    | setting | n | thesis | noise-aware |
    |---|---|---|---|
    | one clause, length 2 | 300 | 0.683 | 0.630 |
    | one clause, length 2 | 3000 | 0.847 | 0.926 |
    | one clause, length 3 | 300 | 0.572 | 0.611 |
    | one clause, length 3 | 3000 | 0.764 | 0.898 |
    | 2 x 3 atoms | 3000 | 0.704 | 0.770 |
    | 3 x 3 atoms | 3000 | 0.709 | 0.680 |
    | 1 x 6 atoms | 3000 | 0.654 | 0.731 |

The noise-aware rank wins 5 of 7 settings, by up to 0.13, and loses two by 0.03-0.05:
where a planted clause is short and its atoms frequent (length 2 at n = 300) or the
budget is split over 3 rounds, the penalty also holds back some true clauses. On the
breast-cancer atoms of ``examples/plot_ilp_classifier.py`` (30 seeds, median) the two
are within 0.015 at epsilon 0.3-10. A stricter level (0.05 instead of the median)
gained more at n = 3000 (0.95) but fell to the majority guess on breast cancer at
epsilon = 0.3 (0.63 against 0.87), and ranking only clauses of positive noisy coverage
lost the patient-level tables' gains; neither was kept.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from skdp.ilp import DPILPClassifier

LENGTH = ["short", "long"]
SHAPE = ["rectangle", "u_shaped", "bucket", "hexagon", "ellipse"]
ROOF = ["none", "flat", "jagged", "peaked", "arc"]
LOAD = ["circle", "triangle", "rectangle_load", "hexagon_load"]
ATOMS = (
    [f"has_{v}" for v in LENGTH]
    + [f"has_{v}" for v in SHAPE]
    + [f"has_{v}_roof" for v in ROOF[1:]]
    + ["has_three_wheels"]
    + [f"has_{v}" for v in LOAD]
    + ["closed", "many_cars"]
)


def trains(n, rng):
    """Propositionalised random trains: (n, len(ATOMS)) 0/1 matrix."""
    X = np.zeros((n, len(ATOMS)), dtype=np.int8)
    n_cars = rng.integers(2, 5, size=n)
    col = {a: j for j, a in enumerate(ATOMS)}
    for c in range(4):
        present = n_cars > c
        length = rng.integers(0, 2, size=n)
        shape = rng.integers(0, 5, size=n)
        roof = rng.integers(0, 5, size=n)
        wheels = rng.integers(2, 4, size=n)
        load = rng.integers(0, 4, size=n)
        rows = np.nonzero(present)[0]
        X[rows, [col[f"has_{LENGTH[v]}"] for v in length[rows]]] = 1
        X[rows, [col[f"has_{SHAPE[v]}"] for v in shape[rows]]] = 1
        roofed = rows[roof[rows] > 0]
        X[roofed, [col[f"has_{ROOF[v]}_roof"] for v in roof[roofed]]] = 1
        X[roofed, col["closed"]] = 1
        X[rows[wheels[rows] == 3], col["has_three_wheels"]] = 1
        X[rows, [col[f"has_{LOAD[v]}"] for v in load[rows]]] = 1
    X[:, col["many_cars"]] = n_cars >= 3
    return X


def label(X, theory):
    return np.any([X[:, list(c)].all(axis=1) for c in theory], axis=0).astype(int)


def planted_theory(n_clauses, length, rng, pool):
    """A random theory with positive rate in [0.3, 0.7] on a public reference sample.

    Atoms are drawn with probability proportional to their frequency to the power
    ``length`` so that long conjunctions are not almost always false.
    """
    w = pool.mean(axis=0) ** length
    w /= w.sum()
    for _ in range(10_000):
        theory = [
            tuple(sorted(rng.choice(len(ATOMS), size=length, replace=False, p=w)))
            for _ in range(n_clauses)
        ]
        rate = label(pool, theory).mean()
        if 0.3 <= rate <= 0.7:
            return theory
    raise RuntimeError("no balanced theory found")


def run(n, n_clauses, length, search, rep, *, epsilon=1.0, learn_length=None, score="noisy"):
    rng = np.random.default_rng(rep)
    pool = trains(5000, rng)
    theory = planted_theory(n_clauses, length, rng, pool)
    X, Xt = trains(n, rng), trains(5000, rng)
    y, yt = label(X, theory), label(Xt, theory)
    clf = DPILPClassifier(
        epsilon=epsilon,
        n_clauses=n_clauses,
        max_clause_length=learn_length or length,
        search=search,
        clause_score=score,
        random_state=rep,
    ).fit(X, y)
    acc = float((clf.predict(Xt) == yt).mean())
    majority = float(max(yt.mean(), 1 - yt.mean()))
    return acc, majority


def table(title, header, rows):
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")


def table_a(R, ns, lengths):
    header = ["clause length", "n", "smart", "naive", "eps=inf", "majority", "noise-aware"]
    rows = []
    for length in lengths:
        for n in ns:
            out = {k: [] for k in ("smart", "naive", "inf", "maj", "aware")}
            for rep in range(R):
                for search in ("smart", "naive"):
                    acc, maj = run(n, 1, length, search, rep)
                    out[search].append(acc)
                out["aware"].append(run(n, 1, length, "smart", rep, score="noise_aware")[0])
                out["inf"].append(run(n, 1, length, "smart", rep, epsilon=np.inf)[0])
                out["maj"].append(maj)
            rows.append([length, n] + [f"{np.mean(out[k]):.3f}" for k in out])
    table("A. one clause, epsilon = 1: test accuracy vs n (thesis Fig. 6.2)", header, rows)


def table_b(R, ns):
    header = ["target", "n", "smart", "eps=inf", "majority", "noise-aware"]
    rows = []
    settings = [
        ("1 x 3 atoms", 1, 3, None),
        ("2 x 3 atoms", 2, 3, None),
        ("3 x 3 atoms", 3, 3, None),
        ("1 x 6 atoms", 1, 6, None),
    ]
    reductions = {}
    for name, c, length, learn in settings:
        for n in ns:
            acc, inf, maj, aware = [], [], [], []
            for rep in range(R):
                a, m = run(n, c, length, "smart", rep, learn_length=learn)
                acc.append(a)
                aware.append(
                    run(n, c, length, "smart", rep, learn_length=learn, score="noise_aware")[0]
                )
                maj.append(m)
                inf.append(run(n, c, length, "smart", rep, epsilon=np.inf, learn_length=learn)[0])
            means = (np.mean(v) for v in (acc, inf, maj, aware))
            rows.append([name, n, *(f"{m:.3f}" for m in means)])
            reductions[(name, n)] = 100 * (1 - (1 - np.mean(acc)) / (1 - np.mean(maj)))
    table("B. several clauses, epsilon = 1: test accuracy vs n (thesis Fig. 6.3a)", header, rows)
    header = ["target"] + [f"n = {n}" for n in ns]
    rows = [[name] + [f"{reductions[(name, n)]:.0f} %" for n in ns] for name, *_ in settings]
    table(
        "C. error reduction over the majority guess, epsilon = 1 (thesis Fig. 6.3b)", header, rows
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    if args.quick:
        table_a(args.replicates, [300, 3000], [2, 3])
        table_b(args.replicates, [3000])
    else:
        table_a(args.replicates, [100, 1000, 10_000, 100_000], [1, 2, 3, 4])
        table_b(args.replicates, [1000, 10_000, 100_000])
    print(f"\n(total {time.perf_counter() - t0:.0f} s, {args.replicates} replicates)")


if __name__ == "__main__":
    main()

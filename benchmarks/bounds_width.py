"""How the declared bounds change DPLinearRegression: test R^2 and the age coefficient
against the width of ``bounds_X`` (doc/choosing_bounds.rst shows this table).

Simulator (clinical units): age ~ U(20, 85) years, BMI ~ N(27, 4.5) kg/m^2 cut to
[16, 48], systolic blood pressure ``SBP = 95 + 0.6 age + 0.9 BMI + N(0, 10^2)`` mmHg.
Public plausible ranges: age 18-90, BMI 15-50, SBP 70-220. Each row of the table
scales the half-width of both feature ranges about their centres (``bounds_y`` stays
70-220); "narrow" declares age 40-60 and BMI 22-30, which clips about 70 % and 40 % of
the rows. Median over ``--seeds`` seeds (new data and noise each), n = 5000 train and
5000 test rows.

Run: ``python benchmarks/bounds_width.py --seeds 10``.
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

from skdp.linear_model import DPLinearRegression

PLAUSIBLE = np.array([[18.0, 90.0], [15.0, 50.0]])
BOUNDS_Y = (70.0, 220.0)


def simulate(n, rng):
    age = rng.uniform(20, 85, n)
    bmi = np.clip(rng.normal(27, 4.5, n), 16, 48)
    y = 95 + 0.6 * age + 0.9 * bmi + rng.normal(0, 10, n)
    return np.column_stack([age, bmi]), y


def settings():
    yield "narrow (age 40-60, BMI 22-30)", np.array([[40.0, 60.0], [22.0, 30.0]])
    c = PLAUSIBLE.mean(axis=1)
    h = (PLAUSIBLE[:, 1] - PLAUSIBLE[:, 0]) / 2
    for k in (1, 3, 10, 100):
        label = "plausible (age 18-90, BMI 15-50)" if k == 1 else f"plausible x{k} width"
        yield label, np.column_stack([c - k * h, c + k * h])


def main(seeds=10, n=5000, epsilons=(1.0, 10.0)):
    rows = []
    for label, b in settings():
        r2 = {e: [] for e in epsilons}
        coef = {e: [] for e in epsilons}
        ols = []
        for s in range(seeds):
            rng = np.random.default_rng(s)
            X, y = simulate(n, rng)
            Xt, yt = simulate(n, rng)
            ols.append(r2_score(yt, LinearRegression().fit(X, y).predict(Xt)))
            for e in epsilons:
                reg = DPLinearRegression(
                    epsilon=e, bounds_X=(b[:, 0], b[:, 1]), bounds_y=BOUNDS_Y, random_state=s
                ).fit(X, y)
                r2[e].append(r2_score(yt, reg.predict(Xt)))
                coef[e].append(reg.coef_[0])
        rows.append((label, r2, coef, np.median(ols)))
    head = (
        "| bounds_X | "
        + " | ".join(f"R² ε={e:g} | age coef ε={e:g}" for e in epsilons)
        + " | R² OLS |"
    )
    print(head)
    print("|" + "---|" * (2 + 2 * len(epsilons)))
    for label, r2, coef, ols in rows:
        cells = " | ".join(f"{np.median(r2[e]):.3f} | {np.median(coef[e]):.2f}" for e in epsilons)
        print(f"| {label} | {cells} | {ols:.3f} |")
    print("(true age coefficient 0.6)")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seeds", type=int, default=10)
    a = p.parse_args()
    main(seeds=a.seeds)

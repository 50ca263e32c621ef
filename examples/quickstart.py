"""Quickstart: differentially private linear regression on scikit-learn's diabetes data.

The privacy budget ``epsilon`` is the total guarantee of one ``fit``. The functional
mechanism needs *public* bounds on every feature and on the target; they must not be
read off the private data. Here they come from clinical domain knowledge about the
unscaled diabetes variables (age in years, BMI, mean arterial blood pressure, six
blood serum measurements) and from the documented range of the target (a disease
progression score, 25 to 346). Values outside the bounds are clipped.

Run ``python examples/quickstart.py`` (a second or two).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split

from skdp.linear_model import DPLinearRegression

# Public bounds: plausible clinical ranges, declared before looking at the data.
FEATURE_BOUNDS = {
    "age": (18, 90),  # years (adult cohort)
    "sex": (1, 2),  # coded 1/2
    "bmi": (15, 50),  # kg/m^2
    "bp": (50, 150),  # mean arterial pressure, mmHg
    "s1": (80, 350),  # total serum cholesterol, mg/dL
    "s2": (30, 250),  # low-density lipoproteins, mg/dL
    "s3": (15, 110),  # high-density lipoproteins, mg/dL
    "s4": (1, 10),  # total cholesterol / HDL
    "s5": (3, 6.5),  # log of serum triglycerides
    "s6": (50, 150),  # blood sugar, mg/dL
}
TARGET_BOUNDS = (25, 346)  # documented range of the progression score
EPSILONS = (1.0, 10.0, 100.0)


def main():
    data = load_diabetes(scaled=False, as_frame=True)
    X, y = data.data[list(FEATURE_BOUNDS)], data.target
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    lo = np.array([b[0] for b in FEATURE_BOUNDS.values()], dtype=float)
    hi = np.array([b[1] for b in FEATURE_BOUNDS.values()], dtype=float)

    rows = []
    t = time.perf_counter()
    ols = LinearRegression().fit(X_tr, y_tr)
    rows.append(
        ("LinearRegression (non-private)", "inf", ols.score(X_te, y_te), time.perf_counter() - t)
    )
    for eps in EPSILONS:
        t = time.perf_counter()
        model = DPLinearRegression(
            epsilon=eps, bounds_X=(lo, hi), bounds_y=TARGET_BOUNDS, random_state=0
        ).fit(X_tr, y_tr)
        fit_time = time.perf_counter() - t
        spent = f"{model.epsilon_spent_:g} ({model.privacy_guarantee_})"
        rows.append(("DPLinearRegression", spent, model.score(X_te, y_te), fit_time))

    print(f"diabetes: {len(X_tr)} training rows, {len(X_te)} test rows, {X.shape[1]} features\n")
    print(f"{'estimator':<32} {'epsilon spent':<18} {'test R^2':>9} {'fit time (ms)':>14}")
    for name, eps, r2, dt in rows:
        print(f"{name:<32} {eps:<18} {r2:>9.3f} {dt * 1e3:>14.1f}")
    print(
        "\nWith 331 training rows and 10 features the noise needed for epsilon = 1 swamps "
        "the signal (R^2 can be negative);\nutility grows with epsilon and with n "
        "(see benchmarks/linear_regression.py)."
    )


if __name__ == "__main__":
    main()

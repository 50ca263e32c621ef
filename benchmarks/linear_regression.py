"""Benchmark of DPLinearRegression: utility against OLS, the previous default and
diffprivlib (issue 19 §2), and fit time.

Part 1 -- utility grid. Test R^2, median and 10th percentile over ``--seeds`` seeds (each
seed: new data or a new train/test split, and new noise), for

* ``OLS``: non-private least squares on the same split;
* ``previous``: skdp's previous default (before issue 19), reproduced in
  :func:`previous_default`: Zhang et al.'s release of all ``d'^2 + d'`` coefficients with
  Laplace noise of scale ``(d'^2 + 2 d') / eps`` and the ridge ``5 sqrt(2)`` scale;
* ``skdp``: ``DPLinearRegression()`` defaults (pure eps: Laplace release of the distinct
  statistics, adaptive ridge from a private smallest eigenvalue);
* ``gauss``: ``DPLinearRegression(mechanism="gaussian", delta=1/n^2)``;
* ``diffprivlib``: diffprivlib 0.6.6's ``LinearRegression`` with the same bounds. It does
  not import with scikit-learn >= 1.6, so it runs in a subprocess of a separate virtual
  environment (``--dpl-python``, default ``/tmp/dplvenv/bin/python``; create it with
  ``python -m venv /tmp/dplvenv && /tmp/dplvenv/bin/pip install diffprivlib
  "scikit-learn<1.6"``). Without it the column says ``n/a``.

Every model gets the same public bounds (declared, never read off the data):

* ``box``: features uniform on their box ``[-1, 1]^d``, ``y = X w + 0.3 + N(0, 0.3^2)``,
  ``w`` a random unit vector per seed (OLS R^2 about 0.79), ``bounds_y = +-(sum |w| +
  1.5)``;
* ``mkreg``: :func:`sklearn.datasets.make_regression` (standard normal features,
  ``noise=10``, ``bias=20``), ``bounds_X = (-4, 4)`` (four standard deviations),
  ``bounds_y = 20 +- 4 sd(y)`` from the generator's coefficients;
* ``loose``: correlated (0.3) features concentrated in a loose public box (``50 + 12.5 Z``
  in ``(0, 100)``), ``y`` linear with ``R^2 = 0.986``, ``bounds_y`` the range of the
  linear map over the box: built to reproduce the issue's 9,000-row, 3-feature example
  (previous default 0.90 at eps=1 and 0.31 at eps=0.1, against 0.895 and 0.353 there);
* ``nonlin``: :func:`skdp.datasets.make_nonlinear_repeated_measures` (Su et al. 2023): the
  4 covariates on their public box ``(0, a_j)``, target the mean of the 5 measurements,
  ``bounds_y`` the regression function's range over the box +- 1 (a linear model is
  misspecified here);
* ``diabetes``: scikit-learn's bundled diabetes data (442 rows, 10 features, 75/25 split),
  ``bounds_X = (-0.2, 0.2)`` (sklearn's scaling), ``bounds_y = (25, 346)`` (documented).

Part 2 -- scaling. Fit time (best of 5; of 2 at 10^7) for n = 10^4 ... 10^7 rows, d = 10,
with BLAS limited to one thread, and the peak extra memory of ``fit`` (tracemalloc).

Run ``OMP_NUM_THREADS=1 python benchmarks/linear_regression.py`` (about 4 minutes on one
core), ``--quick`` (5 seeds, fewer settings) or ``--only utility|scaling``.

Measured (20 seeds, one thread, load average 5-7 on 2 shared cores; median and 10th
percentile of test R^2; flags as in :func:`flags`: ``ok`` a target of the issue met,
``OLS-x``/``p10<0``/``miss`` a target missed, ``<prev`` a median below the previous
default's, ``G``/``L`` the better of the Gaussian and Laplace releases).

Reading. The new default beats the previous one in median in 76 of 82 rows, often by a
lot (d = 10, n <= 5000, eps = 0.1: the previous default goes far below 0), and its 10th
percentile is higher in 79 (lower by 0.01-0.09 in three eps = 0.1 rows). Re-run over
100 seeds, the six ``<prev`` rows are ties within sampling noise except box n=1000 d=3
and mkreg n=5000 d=5 at eps=0.1 (medians 0.04 and 0.02 lower, 10th percentiles 0.28
and 0.23 higher). The issue's targets (n >= 5000, d <= 5) are met in 34 of 42 rows:
everywhere at n = 20000, on box and nonlin, and on the issue's own shape (loose n=9000
d=3: 0.976 against OLS 0.986 at eps=1; 0.509, 10th percentile 0.32, at eps=0.1). They
are missed at n = 5000 where the features' standard deviation is a quarter of the box
half-width (mkreg, loose: 0.05-0.28 below OLS at eps=1; at eps=0.1 medians a little
below the previous default or a 10th percentile below 0): there the noise of
``X~^T X~`` is as large as its smallest eigenvalue. The Gaussian release has the higher
median in 48 of 82 rows (mostly d >= 5), never at d = 1, and loses several small-n
eps = 0.1 rows and the issue's shape, so the pure-eps Laplace release stays the default.
diffprivlib's LinearRegression (functional mechanism without regularisation) breaks down
(R^2 below -10) whenever the noise makes its quadratic indefinite.

|problem|n|d|eps|OLS|previous|skdp|gauss (1/n^2)|diffprivlib|flags|
|---|---|---|---|---|---|---|---|---|---|
|box|1000|1|1.0|0.786|0.771 (0.75)|0.786 (0.78)|0.785 (0.78)|0.778 (0.75)|L|
|box|1000|1|0.1|0.786|0.444 (0.06)|0.565 (0.30)|0.513 (0.25)|-0.198 (-2.68)|L|
|box|1000|3|1.0|0.791|0.720 (0.64)|0.757 (0.65)|0.758 (0.68)|0.515 (0.27)|G|
|box|1000|3|0.1|0.791|0.137 (-0.45)|-0.019 (-0.26)|0.251 (-0.12)|<-10 (<-10)|<prev G|
|box|1000|5|1.0|0.788|0.467 (0.23)|0.551 (0.38)|0.678 (0.61)|-5.071 (<-10)|G|
|box|1000|5|0.1|0.788|-0.389 (-1.31)|-0.147 (-0.72)|0.052 (-0.49)|<-10 (<-10)|G|
|box|1000|10|1.0|0.785|-0.768 (-3.07)|-0.022 (-0.32)|0.411 (0.20)|<-10 (<-10)|G|
|box|1000|10|0.1|0.785|-4.216 (-9.01)|-0.262 (-0.59)|-0.316 (-0.51)|<-10 (<-10)|L|
|box|5000|1|1.0|0.790|0.789 (0.78)|0.790 (0.78)|0.789 (0.78)|0.789 (0.78)|ok L|
|box|5000|1|0.1|0.790|0.738 (0.67)|0.783 (0.78)|0.781 (0.74)|0.760 (0.63)|ok L|
|box|5000|3|1.0|0.786|0.779 (0.77)|0.784 (0.78)|0.783 (0.78)|0.778 (0.76)|ok L|
|box|5000|3|0.1|0.786|0.608 (0.44)|0.519 (0.39)|0.639 (0.36)|-0.498 (-1.92)|<prev miss G|
|box|5000|5|1.0|0.787|0.748 (0.73)|0.777 (0.76)|0.782 (0.77)|0.735 (0.60)|ok G|
|box|5000|5|0.1|0.787|0.185 (-0.23)|0.294 (0.15)|0.478 (0.22)|<-10 (<-10)|ok G|
|box|5000|10|1.0|0.786|0.448 (0.15)|0.586 (0.43)|0.744 (0.72)|-2.920 (-8.34)|G|
|box|5000|10|0.1|0.786|-2.147 (<-10)|-0.040 (-0.20)|0.075 (-0.15)|<-10 (<-10)|G|
|box|20000|1|1.0|0.786|0.786 (0.78)|0.786 (0.78)|0.786 (0.78)|0.786 (0.78)|ok L|
|box|20000|1|0.1|0.786|0.781 (0.77)|0.786 (0.78)|0.785 (0.78)|0.783 (0.78)|ok L|
|box|20000|3|1.0|0.787|0.787 (0.78)|0.787 (0.78)|0.787 (0.78)|0.787 (0.78)|ok L|
|box|20000|3|0.1|0.787|0.759 (0.73)|0.781 (0.77)|0.775 (0.77)|0.725 (0.67)|ok L|
|box|20000|5|1.0|0.786|0.784 (0.78)|0.786 (0.78)|0.785 (0.78)|0.783 (0.77)|ok L|
|box|20000|5|0.1|0.786|0.638 (0.55)|0.738 (0.65)|0.756 (0.73)|0.359 (-0.56)|ok G|
|box|20000|10|1.0|0.788|0.743 (0.71)|0.776 (0.76)|0.785 (0.78)|0.650 (0.51)|G|
|box|20000|10|0.1|0.788|-0.069 (-1.01)|0.341 (0.14)|0.573 (0.35)|<-10 (<-10)|G|
|mkreg|1000|1|1.0|0.960|0.753 (0.62)|0.852 (0.71)|0.838 (0.67)|0.880 (0.60)|L|
|mkreg|1000|1|0.1|0.960|0.210 (-0.11)|0.290 (0.03)|0.125 (-0.15)|-6.727 (<-10)|L|
|mkreg|1000|3|1.0|0.989|0.455 (0.32)|0.598 (0.37)|0.590 (0.41)|-0.830 (<-10)|L|
|mkreg|1000|3|0.1|0.989|0.008 (-0.27)|0.017 (-0.19)|0.058 (-0.24)|<-10 (<-10)|G|
|mkreg|1000|5|1.0|0.994|0.294 (0.03)|0.282 (0.17)|0.411 (0.27)|<-10 (<-10)|<prev G|
|mkreg|1000|5|0.1|0.994|-0.060 (-0.50)|0.004 (-0.12)|-0.028 (-0.28)|<-10 (<-10)|L|
|mkreg|1000|10|1.0|0.997|-0.092 (-0.53)|0.073 (0.02)|0.209 (0.13)|<-10 (<-10)|G|
|mkreg|1000|10|0.1|0.997|-0.455 (-1.80)|-0.011 (-0.09)|-0.004 (-0.11)|<-10 (<-10)|G|
|mkreg|5000|1|1.0|0.957|0.939 (0.62)|0.957 (0.63)|0.957 (0.63)|0.954 (0.63)|ok L|
|mkreg|5000|1|0.1|0.957|0.566 (0.39)|0.686 (0.30)|0.558 (0.34)|0.661 (-0.02)|ok L|
|mkreg|5000|3|1.0|0.990|0.871 (0.81)|0.942 (0.87)|0.959 (0.93)|0.935 (0.87)|OLS-0.05 G|
|mkreg|5000|3|0.1|0.990|0.294 (0.11)|0.258 (0.10)|0.374 (0.19)|<-10 (<-10)|<prev miss G|
|mkreg|5000|5|1.0|0.994|0.717 (0.66)|0.790 (0.69)|0.915 (0.81)|-0.830 (<-10)|OLS-0.20 G|
|mkreg|5000|5|0.1|0.994|0.130 (-0.02)|0.077 (0.00)|0.205 (0.04)|<-10 (<-10)|<prev miss G|
|mkreg|5000|10|1.0|0.997|0.325 (0.07)|0.354 (0.23)|0.659 (0.63)|<-10 (<-10)|G|
|mkreg|5000|10|0.1|0.997|-0.256 (-0.86)|0.029 (-0.10)|0.061 (-0.05)|<-10 (<-10)|G|
|mkreg|20000|1|1.0|0.950|0.947 (0.43)|0.950 (0.43)|0.950 (0.43)|0.950 (0.43)|ok L|
|mkreg|20000|1|0.1|0.950|0.829 (0.39)|0.923 (0.43)|0.890 (0.38)|0.892 (0.39)|ok L|
|mkreg|20000|3|1.0|0.989|0.969 (0.95)|0.987 (0.97)|0.987 (0.97)|0.985 (0.97)|ok L|
|mkreg|20000|3|0.1|0.989|0.641 (0.58)|0.729 (0.67)|0.767 (0.65)|0.612 (0.01)|ok G|
|mkreg|20000|5|1.0|0.993|0.949 (0.92)|0.986 (0.98)|0.989 (0.98)|0.968 (0.94)|ok G|
|mkreg|20000|5|0.1|0.993|0.467 (0.26)|0.473 (0.37)|0.583 (0.52)|<-10 (<-10)|ok G|
|mkreg|20000|10|1.0|0.997|0.780 (0.69)|0.854 (0.82)|0.964 (0.93)|-1.197 (<-10)|G|
|mkreg|20000|10|0.1|0.997|0.033 (-2.09)|0.127 (0.09)|0.333 (0.28)|<-10 (<-10)|G|
|loose|1000|1|1.0|0.986|0.795 (0.65)|0.882 (0.81)|0.851 (0.76)|0.951 (0.80)|L|
|loose|1000|1|0.1|0.986|0.215 (-0.08)|0.234 (0.02)|0.163 (-0.11)|-5.494 (<-10)|L|
|loose|1000|3|1.0|0.986|0.365 (-0.03)|0.465 (0.31)|0.504 (0.35)|<-10 (<-10)|G|
|loose|1000|3|0.1|0.986|-0.122 (-1.11)|-0.058 (-0.56)|-0.116 (-0.73)|<-10 (<-10)|L|
|loose|1000|5|1.0|0.986|0.216 (-0.52)|0.196 (-0.01)|0.402 (0.20)|<-10 (<-10)|<prev G|
|loose|1000|5|0.1|0.986|-0.462 (-2.21)|-0.121 (-0.53)|-0.179 (-0.95)|<-10 (<-10)|L|
|loose|1000|10|1.0|0.985|-1.214 (-2.89)|0.028 (-0.13)|0.230 (-0.11)|<-10 (<-10)|G|
|loose|1000|10|0.1|0.985|-2.658 (<-10)|-0.076 (-0.30)|-0.163 (-0.76)|<-10 (<-10)|L|
|loose|5000|1|1.0|0.986|0.967 (0.95)|0.985 (0.98)|0.985 (0.98)|0.985 (0.98)|ok L|
|loose|5000|1|0.1|0.986|0.622 (0.43)|0.760 (0.65)|0.708 (0.48)|0.893 (0.07)|ok L|
|loose|5000|3|1.0|0.986|0.814 (0.72)|0.898 (0.83)|0.933 (0.86)|0.903 (0.64)|OLS-0.09 G|
|loose|5000|3|0.1|0.986|0.214 (-0.32)|0.243 (0.06)|0.133 (-0.01)|<-10 (<-10)|ok L|
|loose|5000|5|1.0|0.986|0.637 (0.45)|0.705 (0.55)|0.802 (0.69)|<-10 (<-10)|OLS-0.28 G|
|loose|5000|5|0.1|0.986|-0.022 (-0.89)|0.061 (-0.19)|0.036 (-0.20)|<-10 (<-10)|p10<0 L|
|loose|5000|10|1.0|0.986|0.047 (-1.60)|0.470 (0.25)|0.714 (0.59)|<-10 (<-10)|G|
|loose|5000|10|0.1|0.986|-2.079 (-5.50)|-0.014 (-0.36)|0.041 (-0.23)|<-10 (<-10)|G|
|loose|20000|1|1.0|0.986|0.984 (0.98)|0.986 (0.99)|0.986 (0.99)|0.986 (0.99)|ok L|
|loose|20000|1|0.1|0.986|0.906 (0.84)|0.974 (0.94)|0.979 (0.93)|0.976 (0.94)|ok G|
|loose|20000|3|1.0|0.986|0.962 (0.95)|0.984 (0.98)|0.983 (0.98)|0.981 (0.97)|ok L|
|loose|20000|3|0.1|0.986|0.568 (0.35)|0.700 (0.60)|0.756 (0.63)|0.252 (-3.30)|ok G|
|loose|20000|5|1.0|0.986|0.919 (0.88)|0.968 (0.94)|0.977 (0.97)|0.880 (0.76)|ok G|
|loose|20000|5|0.1|0.986|0.387 (-0.14)|0.392 (0.11)|0.582 (0.32)|<-10 (<-10)|ok G|
|loose|20000|10|1.0|0.986|0.681 (0.51)|0.813 (0.72)|0.930 (0.89)|<-10 (<-10)|G|
|loose|20000|10|0.1|0.986|-0.673 (<-10)|0.236 (0.06)|0.441 (0.22)|<-10 (<-10)|G|
|loose|9000|3|1.0|0.986|0.905 (0.85)|0.976 (0.96)|0.976 (0.95)|0.963 (0.89)|ok L|
|loose|9000|3|0.1|0.986|0.347 (-0.09)|0.509 (0.32)|0.496 (0.23)|<-10 (<-10)|ok L|
|nonlin|1000|4|1.0|0.880|0.693 (0.49)|0.751 (0.67)|0.817 (0.73)|0.311 (-0.42)|G|
|nonlin|1000|4|0.1|0.880|-0.171 (-1.01)|-0.004 (-0.19)|0.226 (-0.07)|<-10 (<-10)|G|
|nonlin|5000|4|1.0|0.879|0.860 (0.83)|0.874 (0.86)|0.876 (0.87)|0.862 (0.85)|ok G|
|nonlin|5000|4|0.1|0.879|0.467 (0.12)|0.571 (0.25)|0.678 (0.48)|-5.379 (<-10)|ok G|
|nonlin|20000|4|1.0|0.881|0.879 (0.88)|0.881 (0.88)|0.880 (0.88)|0.880 (0.88)|ok L|
|nonlin|20000|4|0.1|0.881|0.810 (0.71)|0.853 (0.75)|0.860 (0.84)|0.761 (0.67)|ok G|
|diabetes|331|10|1.0|0.468|-0.185 (-0.48)|-0.090 (-0.18)|0.009 (-0.06)|<-10 (<-10)|G|
|diabetes|331|10|0.1|0.468|-0.348 (-0.71)|-0.174 (-0.27)|-0.169 (-0.28)|<-10 (<-10)|G|

Rows with '<prev', again over 100 seeds (skdp and previous only):

|box|1000|3|0.1|previous 0.140 (-0.70)|skdp 0.103 (-0.42)|
|box|5000|3|0.1|previous 0.583 (0.34)|skdp 0.595 (0.44)|
|mkreg|1000|5|1.0|previous 0.244 (-0.03)|skdp 0.245 (0.14)|
|mkreg|5000|3|0.1|previous 0.282 (0.11)|skdp 0.280 (0.16)|
|mkreg|5000|5|0.1|previous 0.127 (-0.22)|skdp 0.106 (0.01)|
|loose|1000|5|1.0|previous 0.067 (-0.58)|skdp 0.210 (-0.03)|

rows: 82; skdp median below previous: 6; targets met: 34/42; Gaussian median above
Laplace: 48/82 (G/L in flags); 132 s; load average 6.6

Fit time and peak extra memory, d = 10, one BLAS thread

|n|fit time (s)|s per 10^6 rows|peak extra memory in fit (MiB)|X (MiB)|
|---|---|---|---|---|
|1e+04|0.003|0.282|0.93|1|
|1e+05|0.024|0.240|8.27|8|
|1e+06|0.208|0.208|10.64|76|
|1e+07|2.107|0.211|10.65|763|
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import pickle
import struct
import subprocess
import sys
import time
import tracemalloc

import numpy as np
from sklearn.datasets import load_diabetes, make_regression
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from skdp.datasets import NONLINEAR_W_UPPER, make_nonlinear_repeated_measures
from skdp.datasets import nonlinear_regression_function as _f_nonlin
from skdp.linear_model import DPLinearRegression
from skdp.linear_model._functional_release import _trimmed_minimiser

EPSILONS = (1.0, 0.1)
N_TEST = 5000


# ----------------------------------------------------------------------- problems
def box(seed, n, d):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)  # a random direction: signal variance 1/3, R^2 about 0.79
    X = rng.uniform(-1, 1, size=(n + N_TEST, d))
    y = X @ w + 0.3 + rng.normal(0, 0.3, n + N_TEST)
    top = float(np.abs(w).sum() + 1.5)
    return X[:n], X[n:], y[:n], y[n:], (-1.0, 1.0), (-top, top)


def mkreg(seed, n, d):
    X, y, coef = make_regression(
        n + N_TEST, d, n_informative=d, noise=10.0, bias=20.0, coef=True, random_state=seed
    )
    coef = np.atleast_1d(coef)
    sd = math.sqrt(float(coef @ coef) + 100.0)
    return X[:n], X[n:], y[:n], y[n:], (-4.0, 4.0), (20 - 4 * sd, 20 + 4 * sd)


_LOOSE_W = np.array([0.8, -0.5, 0.3, 0.6, -0.4, 0.2, 0.7, -0.3, 0.5, 0.1])


def loose(seed, n, d):
    rng = np.random.default_rng(seed)
    C = 0.3 * np.ones((d, d)) + 0.7 * np.eye(d)
    Z = np.clip(rng.multivariate_normal(np.zeros(d), C, n + N_TEST) * 0.25, -1, 1)
    X = 50 + 50 * Z  # public box (0, 100)
    w = _LOOSE_W[:d]
    f = X @ w
    y = f + 10 + rng.normal(0, 0.12 * f.std(), n + N_TEST)
    lo = np.where(w > 0, 0, 100) @ w + 10
    hi = np.where(w > 0, 100, 0) @ w + 10
    return X[:n], X[n:], y[:n], y[n:], (0.0, 100.0), (float(lo), float(hi))


def nonlin(seed, n, d=4):
    data = make_nonlinear_repeated_measures(n + N_TEST, random_state=seed)
    X, y = data[:, :4], data[:, 4:].mean(axis=1)
    upper = np.asarray(NONLINEAR_W_UPPER)
    corners = np.array(np.meshgrid(*[[0.0, u] for u in upper])).reshape(4, -1).T
    f = _f_nonlin(corners, (0.2, 1.0, 0.8, -1.2, 0.6))
    bx = (np.zeros(4), upper)
    return X[:n], X[n:], y[:n], y[n:], bx, (float(f.min() - 1), float(f.max() + 1))


def diabetes(seed, n=None, d=None):
    X, y = load_diabetes(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed)
    return X_tr, X_te, y_tr, y_te, (-0.2, 0.2), (25.0, 346.0)


PROBLEMS = {"box": box, "mkreg": mkreg, "loose": loose, "nonlin": nonlin, "diabetes": diabetes}


def settings(quick):
    ns = (1000, 5000) if quick else (1000, 5000, 20000)
    ds = (1, 3, 5) if quick else (1, 3, 5, 10)
    out = [(p, n, d) for p in ("box", "mkreg", "loose") for n in ns for d in ds]
    out += [("loose", 9000, 3)]  # the example
    out += [("nonlin", n, 4) for n in ns] + [("diabetes", 331, 10)]
    return out


# --------------------------------------------------------------- previous default
def previous_default(X, y, bx, by, eps, seed):
    """skdp's DPLinearRegression before issue 19 (declared bounds): Laplace noise of
    scale ``(d'^2 + 2d') / eps`` on every entry of ``X~^T X~`` and of ``-2 X~^T y~``,
    symmetrisation, ridge ``5 sqrt(2)`` scale, trimmed closed-form minimiser.
    Returns ``(coef, intercept)``."""
    p = X.shape[1]
    lo = np.broadcast_to(np.asarray(bx[0], float), p)
    hi = np.broadcast_to(np.asarray(bx[1], float), p)
    ax, cx = 2 / (hi - lo), -2 * lo / (hi - lo) - 1
    ay, cy = 2 / (by[1] - by[0]), -2 * by[0] / (by[1] - by[0]) - 1
    Xt = np.hstack([np.clip(X, lo, hi) * ax + cx, np.ones((len(X), 1))])
    yt = np.clip(y, *by) * ay + cy
    d = p + 1
    scale = (d * d + 2 * d) / eps
    rng = np.random.default_rng([seed, 19])
    M = Xt.T @ Xt + rng.laplace(0, scale, (d, d))
    alpha = -2 * Xt.T @ yt + rng.laplace(0, scale, d)
    M = (M + M.T) / 2 + 5 * math.sqrt(2) * scale * np.eye(d)
    w, _ = _trimmed_minimiser(M, alpha)
    return w[:p] * ax / ay, float((w[:p] @ cx + w[p] - cy) / ay)


# ------------------------------------------------------------ diffprivlib worker
_WORKER = r"""
import pickle, struct, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from diffprivlib.models import LinearRegression
from sklearn.metrics import r2_score
inp, out = sys.stdin.buffer, sys.stdout.buffer
while True:
    head = inp.read(8)
    if len(head) < 8:
        break
    task = pickle.loads(inp.read(struct.unpack("<Q", head)[0]))
    p = task["X"].shape[1]
    lo = np.broadcast_to(np.asarray(task["bx"][0], float), p)
    hi = np.broadcast_to(np.asarray(task["bx"][1], float), p)
    res = []
    for eps in task["eps"]:
        m = LinearRegression(epsilon=eps, bounds_X=(lo, hi), bounds_y=task["by"],
                             random_state=task["seed"])
        m.fit(task["X"], task["y"])
        res.append(float(r2_score(task["yt"], m.predict(task["Xt"]))))
    blob = pickle.dumps(res)
    out.write(struct.pack("<Q", len(blob)) + blob)
    out.flush()
"""


class Diffprivlib:
    """diffprivlib's LinearRegression in a subprocess of another Python (or ``None``)."""

    def __init__(self, python):
        self.proc = None
        self.version = None
        if not python or not os.path.exists(python):
            return
        try:
            self.version = subprocess.run(
                [
                    python,
                    "-c",
                    "import diffprivlib, sklearn; "
                    "print(diffprivlib.__version__, sklearn.__version__)",
                ],
                capture_output=True,
                text=True,
                check=True,
                timeout=120,
            ).stdout.strip()
        except (subprocess.SubprocessError, OSError):
            return
        self.proc = subprocess.Popen(
            [python, "-c", _WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
        )

    def r2(self, X, Xt, y, yt, bx, by, eps, seed):
        if self.proc is None:
            return [math.nan] * len(eps)
        blob = pickle.dumps(
            {"X": X, "Xt": Xt, "y": y, "yt": yt, "bx": bx, "by": by, "eps": eps, "seed": seed},
            protocol=4,
        )
        self.proc.stdin.write(struct.pack("<Q", len(blob)) + blob)
        self.proc.stdin.flush()
        size = struct.unpack("<Q", self.proc.stdout.read(8))[0]
        return pickle.loads(self.proc.stdout.read(size))

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


# ------------------------------------------------------------------------ utility
METHODS = ("OLS", "previous", "skdp", "gauss", "diffprivlib")


def run_setting(problem, n, d, seeds, dpl, methods=METHODS):
    r2 = {(m, e): [] for m in METHODS for e in EPSILONS}
    for seed in range(seeds):
        X, Xt, y, yt, bx, by = PROBLEMS[problem](seed, n, d)
        ols = LinearRegression().fit(X, y).score(Xt, yt)
        for i, r in enumerate(dpl.r2(X, Xt, y, yt, bx, by, list(EPSILONS), seed)):
            r2[("diffprivlib", EPSILONS[i])].append(r)
        for eps in EPSILONS:
            r2[("OLS", eps)].append(ols)
            coef, b0 = previous_default(X, y, bx, by, eps, seed)
            r2[("previous", eps)].append(r2_score(yt, Xt @ coef + b0))
            m = DPLinearRegression(epsilon=eps, bounds_X=bx, bounds_y=by, random_state=seed)
            r2[("skdp", eps)].append(r2_score(yt, m.fit(X, y).predict(Xt)))
            if "gauss" not in methods:
                continue
            g = DPLinearRegression(
                epsilon=eps,
                delta=1.0 / len(y) ** 2,
                mechanism="gaussian",
                bounds_X=bx,
                bounds_y=by,
                random_state=seed,
            )
            r2[("gauss", eps)].append(r2_score(yt, g.fit(X, y).predict(Xt)))
    return {k: np.asarray(v) for k, v in r2.items()}


def _cell(v):
    if v.size == 0 or np.all(np.isnan(v)):
        return "n/a"
    med, p10 = np.median(v), np.quantile(v, 0.1)
    med_s = f"{med:.3f}" if med > -10 else "<-10"
    p10_s = f"{p10:.2f}" if p10 > -10 else "<-10"
    return f"{med_s} ({p10_s})"


def flags(problem, n, d, eps, r):
    """``<prev``: skdp's median below the previous default's. Where the issue sets a
    target (n >= 5000, d <= 5): ``ok``, or what misses (``OLS-x``: x below OLS at
    eps=1; ``p10<0``: 10th percentile below 0 at eps=0.1; ``miss``: median below the
    previous default's). ``G``/``L``: whether the Gaussian or the Laplace release has
    the higher median."""
    med = {m: np.median(r[(m, eps)]) for m in METHODS}
    out = []
    if med["skdp"] < med["previous"]:
        out.append("<prev")
    if problem != "diabetes" and n >= 5000 and d <= 5:
        if eps == 1.0:
            gap = med["OLS"] - med["skdp"]
            out.append("ok" if gap <= 0.02 else f"OLS-{gap:.2f}")
        else:
            p10 = np.quantile(r[("skdp", eps)], 0.1)
            ok = p10 >= 0 and med["skdp"] >= med["previous"]
            out.append("ok" if ok else ("p10<0" if p10 < 0 else "miss"))
    out.append("G" if med["gauss"] > med["skdp"] else "L")
    return " ".join(out)


def utility_table(seeds, quick, dpl_python):
    dpl = Diffprivlib(dpl_python)
    print(
        f"\n### Test R^2, median (10th percentile) over {seeds} seeds; diffprivlib: "
        f"{dpl.version or 'not available (n/a)'}\n"
    )
    print("|problem|n|d|eps|OLS|previous|skdp|gauss (1/n^2)|diffprivlib|flags|")
    print("|---|---|---|---|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    summary = {"<prev": 0, "targets": 0, "met": 0, "gauss_wins": 0, "rows": 0}
    recheck = []
    for problem, n, d in settings(quick):
        r = run_setting(problem, n, d, seeds, dpl)
        for eps in EPSILONS:
            f = flags(problem, n, d, eps, r)
            summary["rows"] += 1
            summary["<prev"] += "<prev" in f
            if "<prev" in f:
                recheck.append((problem, n, d, eps))
            summary["gauss_wins"] += f.endswith("G")
            tags = f.split()
            if any(t in ("ok", "p10<0", "miss") or t.startswith("OLS-") for t in tags):
                summary["targets"] += 1
                summary["met"] += "ok" in tags
            cells = "|".join(_cell(r[(m, eps)]) for m in METHODS[1:])
            ols = np.median(r[("OLS", eps)])
            print(f"|{problem}|{n}|{d}|{eps}|{ols:.3f}|{cells}|{f}|", flush=True)
    dpl.close()
    if recheck:
        n_more = 5 * seeds
        print(f"\nRows with '<prev', again over {n_more} seeds (skdp and previous only):\n")
        for problem, n, d, eps in recheck:
            r = run_setting(problem, n, d, n_more, Diffprivlib(None), methods=("previous", "skdp"))
            print(
                f"|{problem}|{n}|{d}|{eps}|previous {_cell(r[('previous', eps)])}"
                f"|skdp {_cell(r[('skdp', eps)])}|",
                flush=True,
            )
    print(
        f"\nrows: {summary['rows']}; skdp median below previous: {summary['<prev']}; "
        f"targets met: {summary['met']}/{summary['targets']}; Gaussian median above "
        f"Laplace: {summary['gauss_wins']}/{summary['rows']} (G/L in flags); "
        f"{time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f}"
    )


# ------------------------------------------------------------------------ scaling
def scaling_table(sizes, d=10):
    from threadpoolctl import threadpool_limits

    print(f"\n### Fit time and peak extra memory, d = {d}, one BLAS thread\n")
    print("| n | fit time (s) | s per 10^6 rows | peak extra memory in fit (MiB) | X (MiB) |")
    print("|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    with threadpool_limits(limits=1):
        for n in sizes:
            X = rng.uniform(-1, 1, size=(n, d))
            y = X.sum(axis=1) + rng.normal(size=n)
            model = DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-12, 12))
            times = []
            for _ in range(5 if n <= 10**6 else 2):
                gc.collect()
                t = time.perf_counter()
                model.fit(X, y)
                times.append(time.perf_counter() - t)
            gc.collect()
            tracemalloc.start()
            model.fit(X, y)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            best = min(times)
            print(
                f"| {n:.0e} | {best:.3f} | {best / n * 1e6:.3f} | {peak / 2**20:.2f} "
                f"| {X.nbytes / 2**20:.0f} |"
            )
            del X, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="5 seeds, n <= 5000, d <= 5")
    ap.add_argument("--only", choices=["utility", "scaling"], help="run one part")
    ap.add_argument("--dpl-python", default="/tmp/dplvenv/bin/python")
    args = ap.parse_args()
    seeds = 5 if args.quick else args.seeds
    sizes = (10**4, 10**5, 10**6) if args.quick else (10**4, 10**5, 10**6, 10**7)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    if args.only != "scaling":
        utility_table(seeds, args.quick, args.dpl_python)
    if args.only != "utility":
        scaling_table(sizes)


if __name__ == "__main__":
    main()

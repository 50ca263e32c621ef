"""Labels and the class prior of the conditional (AC-GAN) model.

The generator's fake labels are drawn from a prior that never is a real label: a
Laplace-noised histogram of the class counts (L1 sensitivity 1 under adding or removing
one row, ``k`` under adding or removing one patient of at most ``k`` rows; Dwork et al.
2006), the uniform distribution, or a public prior of the user.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from skdp.exceptions import PrivacyLeakWarning
from skdp.mechanisms import add_laplace

__all__ = ["class_prior", "encode_labels"]


def _key(v):
    return v.item() if isinstance(v, np.generic) else v


def encode_labels(y, classes, *, n_rows):
    """Validate ``y`` and encode it over the declared ``classes``.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or None
    classes : None, "data" or array-like
        Declared labels; ``"data"`` reads them off ``y`` (warns: not private).
    n_rows : int
        Rows of ``X`` (``y`` must have as many labels).

    Returns
    -------
    classes : ndarray
    codes : ndarray of int
        Index of each row's label in ``classes``.
    """
    if y is None:
        raise ValueError("conditional='acgan' needs y (the label column)")
    if np.ndim(y) >= 1 and np.shape(y)[0] != n_rows:
        raise ValueError("y must have one label per row of X (len(y) != len(X))")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError("y must be 1-dimensional")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity")
    if classes is None:
        raise ValueError(
            "conditional='acgan' needs the declared labels: pass classes=[...] "
            "(or classes='data' to read them off y, which is not private)"
        )
    if isinstance(classes, str):
        warnings.warn(
            "classes='data' reads the set of labels off y: it is released without "
            "differential privacy",
            PrivacyLeakWarning,
            stacklevel=4,
        )
        classes = np.unique(y)
    else:
        classes = np.asarray(classes)
        if classes.ndim != 1 or classes.size < 1 or len(np.unique(classes)) != classes.size:
            raise ValueError("classes must be a 1-d array of distinct labels")
    lookup = {_key(c): i for i, c in enumerate(classes)}
    try:
        codes = np.array([lookup[_key(v)] for v in y])
    except (KeyError, TypeError):
        raise ValueError("y contains labels that are not among the declared classes") from None
    return classes, codes


def class_prior(prior, classes, codes, epsilon, rng, *, sensitivity=1.0, secure_mode=False):
    """The label distribution of the fake rows.

    Parameters
    ----------
    prior : {"dp", "uniform"} or dict {class: probability}
    classes : ndarray
    codes : ndarray of int
        The private rows' label codes (read only for ``prior="dp"``).
    epsilon : float
        Budget of ``"dp"`` (``inf``: the exact class frequencies, a non-private fit).
    rng : numpy.random.Generator
    sensitivity : float, default=1.0
        L1 sensitivity of the count vector: 1 per row, ``k`` per patient
        (:class:`~skdp.synthesis._gan._budget.GANPlan`).
    secure_mode : bool, default=False
        Draw the noise by the floating-point-safe grid Laplace mechanism from
        ``os.urandom`` (:func:`skdp.mechanisms.add_laplace`; ``rng`` is not read).

    Returns
    -------
    p : ndarray of shape (n_classes,)
    spent : float
        Epsilon spent (``epsilon`` for a finite ``"dp"``, else 0).
    """
    K = classes.size
    if isinstance(prior, dict):
        p = np.array([float(prior.get(_key(c), 0.0)) for c in classes])
        extra = set(prior) - {_key(c) for c in classes}
        if extra or np.any(p < 0) or not np.isfinite(p).all() or p.sum() <= 0:
            raise ValueError("class_prior must map declared classes to non-negative probabilities")
        return p / p.sum(), 0.0
    if prior == "uniform":
        return np.full(K, 1.0 / K), 0.0
    counts = np.bincount(codes, minlength=K).astype(float)
    if math.isinf(epsilon):
        return counts / counts.sum(), 0.0
    noisy = add_laplace(
        counts, sensitivity=sensitivity, epsilon=epsilon, rng=rng, secure_mode=secure_mode
    )
    noisy = np.clip(noisy, 0.0, None)
    p = noisy / noisy.sum() if noisy.sum() > 0 else np.full(K, 1.0 / K)
    return p, float(epsilon)

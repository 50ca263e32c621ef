"""Noisy 1-way marginals of :class:`~skdp.synthesis.DPGANSynthesizer` and the raking of
its samples to them (``calibrate_marginals=True``).

One Gaussian release, composed with DP-SGD by the budget plan
(:class:`~skdp.synthesis._gan._budget.GANPlan`): the count of every bin or level of every
discrete block of the encoded row (a numeric column's bins, a categorical column's
levels, a binary column's two values). Under add/remove of one row every column's
histogram changes one count by 1, so the release's L2 sensitivity is ``sqrt(d)`` over
``d`` released columns (``k sqrt(d)`` per patient of ``k`` rows). The noise
``N(0, sigma^2)`` on each count is set by the plan: in the joint account with DP-SGD
(the default), ``sigma = k sqrt(d) / mu_m`` with ``mu_m^2`` a share of the Gaussian-DP
budget ``mu^2`` that falls from 0.5 to 0.2 as ``mu`` grows
(:func:`skdp.synthesis._gan._budget.joint_marginals_mu`); in a split
account, zero-concentrated DP ``rho = d k^2 / (2 sigma^2)`` (Bun & Steinke 2016)
converted to ``(eps_marginals, delta_marginals)`` by :func:`skdp.accounting.zcdp_rho`.
The discrete Gaussian of ``secure_mode`` has the same zCDP/Rényi bound (Canonne, Kamath
& Steinke 2020, Theorem 4, column by column), so its joint account is Rényi DP. The
noisy counts are projected onto the probability simplex at the public row count
(post-processing).

After training, every generator's output activation gets one offset per coordinate
(post-processing of the release and of the DP-trained generator): a shift of each
softmax block's logits and of each binary column's logit such that the generator's mean
output on a public latent sample matches the noisy marginal (iterative proportional
fitting of one margin, Deming & Stephan 1940). Each row keeps the generator's own
conditional probabilities up to that shift; the column's average follows the release.
"""

from __future__ import annotations

import numpy as np

from skdp.synthesis._gan._encoding import softmax_blocks

__all__ = [
    "CALIBRATION_ROWS",
    "calibrate",
    "calibrate_generators",
    "marginal_blocks",
    "pooled_marginals",
    "release_class_marginals",
    "release_marginals",
]

#: Latent draws the calibration averages the generator's output over.
CALIBRATION_ROWS = 4096
#: Smallest target probability of a level (a level the release zeroes stays reachable).
_FLOOR = 1e-4
_ITERS = 60


def marginal_blocks(encoder):
    """``[(start, stop)]`` of every released block: the softmax blocks, then each binary
    column's one sigmoid coordinate as ``(j, j + 1)`` (public: the encoder's layout)."""
    blocks = [(int(a), int(b)) for a, b in softmax_blocks(encoder)]
    starts = {a for a, _ in blocks}
    for c in encoder.schema:
        j = encoder.slices_[c.name].start
        if c.kind == "binary" and j not in starts:
            blocks.append((j, j + 1))
    return blocks


def _project(v, total):
    """Euclidean projection of ``v`` onto ``{x >= 0, sum x = total}`` (Duchi et al. 2008)."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    idx = np.arange(1, v.size + 1)
    r = idx[u - css / idx > 0][-1]
    return np.maximum(v - css[r - 1] / r, 0.0)


def _block_counts(Z, blocks):
    """The exact count of every level of every block (a binary column: ``[#0, #1]``)."""
    n = Z.shape[0]
    out = []
    for a, b in blocks:
        if b - a == 1:
            s = float(np.sum(Z[:, a]))
            out.append(np.array([n - s, s]))
        else:
            out.append(np.asarray(Z[:, a:b].sum(axis=0), dtype=float))
    return out


def _noisy(counts, sigma, rng, secure_mode):
    """``counts`` plus ``N(0, sigma^2)`` each (the exact discrete Gaussian with
    ``secure_mode``)."""
    from skdp.mechanisms import discrete_gaussian_noise

    if secure_mode:
        return counts + discrete_gaussian_noise(counts.size, sigma=sigma, secure_mode=True)
    return counts + rng.normal(0.0, sigma, size=counts.size)


def _probabilities(counts, total, noisy):
    """Probabilities from (noisy) counts: projected onto the simplex at ``total`` first
    when ``noisy``; uniform when nothing is left."""
    p = _project(counts, float(max(total, 1))) if noisy else counts
    return p / p.sum() if p.sum() > 0 else np.full(p.size, 1.0 / p.size)


def release_marginals(Z, blocks, sigma, rng, *, secure_mode=False):
    """Noisy probabilities of every block's levels (a binary column: ``[P(0), P(1)]``).

    ``Z``: the encoded private rows (one-hot blocks exact). The counts get
    ``N(0, sigma^2)`` (``secure_mode``: the exact discrete Gaussian from ``os.urandom``)
    and are projected onto the simplex at the public row count.
    """
    n = Z.shape[0]
    out = []
    for counts in _block_counts(Z, blocks):
        if sigma > 0:
            counts = _noisy(counts, sigma, rng, secure_mode)
        out.append(_probabilities(counts, n, sigma > 0))
    return out


def release_class_marginals(Z, labels, n_classes, blocks, sigma, rng, *, secure_mode=False):
    """Noisy probabilities of every block's levels among the rows of each class.

    The AC-GAN's release (:func:`release_marginals` for a declared label): the counts of
    every (class, level) cell of each column's table with the label, ``N(0, sigma^2)``
    on each (``secure_mode``: the exact discrete Gaussian). A row is in one cell of each
    of the ``d`` tables, so the L2 sensitivity is ``sqrt(d)`` (``k sqrt(d)`` per patient
    of ``k`` rows), that of the 1-way release: the same ``sigma`` and account. Each class's
    counts are projected onto the simplex at the mean over blocks of their noisy sums
    (post-processing).

    Returns
    -------
    list (one per class) of list (one per block) of ndarray
    """
    out = []
    for k in range(int(n_classes)):
        counts = _block_counts(Z[np.asarray(labels) == k], blocks)
        if sigma > 0:
            counts = [_noisy(c, sigma, rng, secure_mode) for c in counts]
        total = float(np.mean([c.sum() for c in counts])) if counts else 0.0
        out.append([_probabilities(c, total, sigma > 0) for c in counts])
    return out


def pooled_marginals(class_targets, prior):
    """The 1-way marginals implied by class-conditional ones and a class prior (the
    prior-weighted mixture; post-processing)."""
    prior = np.asarray(prior, dtype=float)
    return [
        sum(float(w) * ct[i] for w, ct in zip(prior, class_targets, strict=True))
        for i in range(len(class_targets[0]))
    ]


def _floored(p):
    p = np.maximum(np.asarray(p, dtype=float), _FLOOR)
    return p / p.sum()


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def calibrate(H, offsets, blocks, targets):
    """Offsets that make the mean output over pre-activations ``H`` match the targets.

    Softmax block: ``b <- b + log(t / mean softmax(H + b))`` (iterative proportional
    fitting of one margin); binary coordinate: the shift whose mean sigmoid is the
    target (bisection). Coordinates outside the blocks keep their offsets.
    """
    off = np.array(offsets, dtype=float, copy=True)
    for (a, b), t in zip(blocks, targets, strict=True):
        t = _floored(t)
        if b - a == 1:
            lo, hi = -30.0, 30.0
            for _ in range(_ITERS):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if np.mean(_sigmoid(H[:, a] + mid)) < t[1] else (lo, mid)
            off[a] = 0.5 * (lo + hi)
            continue
        x = off[a:b].copy()
        for _ in range(_ITERS):
            m = np.maximum(_softmax(H[:, a:b] + x).mean(axis=0), 1e-12)
            x = x + np.log(t / m)
            x = x - x.mean()
        off[a:b] = x
    return off


def output_activation(generator):
    """The generator body's :class:`~skdp.synthesis._gan._nets.OutputActivation`, or
    None."""
    from skdp.synthesis._gan._nets import OutputActivation

    found = [m for m in generator.modules() if isinstance(m, OutputActivation)]
    return found[-1] if found else None


def pre_activations(generator, activation, draw):
    """The activation's input (before its offset) on the generator's inputs ``draw()``
    (latent draws and labels: no data)."""
    import torch

    from skdp.utils._torch import to_numpy

    seen = []
    handle = activation.register_forward_pre_hook(lambda mod, args: seen.append(args[0]))
    try:
        generator.eval()
        with torch.no_grad():
            generator(*draw())
    finally:
        handle.remove()
    return to_numpy(seen[-1]).astype(float)


def _generators_with_latents(generators, run, rng):
    """For each generator: ``(generator, activation, parameter, torch generator, z)``
    with ``z()`` :data:`CALIBRATION_ROWS` latent draws on the generator's device (a
    fresh torch generator from ``rng`` per generator, no data)."""
    from skdp.synthesis._gan._sampling import latent
    from skdp.utils._torch import torch_generator

    cfg = run.config
    for g in generators:
        p = next(g.parameters())
        tgen = torch_generator(rng, "cpu")

        def z(p=p, tgen=tgen):
            draw = latent(CALIBRATION_ROWS, cfg.latent_dim, cfg.latent_distribution, tgen, p.dtype)
            return draw.to(p.device)

        yield g, output_activation(g), p, tgen, z


def calibrate_generators(generators, run, blocks, targets, rng):
    """Shift every generator's output offsets so that its mean output on
    :data:`CALIBRATION_ROWS` latent draws from ``rng`` (labels from the class prior)
    matches the noisy marginals (in place). ``targets`` from
    :func:`release_class_marginals` (a list per class): each class's own shift
    (``class_offset``), so that the generator's mean output for label ``c`` matches
    class ``c``'s noisy marginals."""
    if targets and isinstance(targets[0], list):
        return _calibrate_classes(generators, run, blocks, targets, rng)
    import torch

    m = CALIBRATION_ROWS
    for g, act, p, tgen, z in _generators_with_latents(generators, run, rng):

        def draw(p=p, tgen=tgen, z=z):
            latents, c = z(), None
            if run.prior is not None:
                prior = run.prior.detach().cpu().to(torch.float64)
                c = torch.multinomial(prior, m, replacement=True, generator=tgen).to(p.device)
            return latents, c

        H = pre_activations(g, act, draw)
        offsets = calibrate(H, act.offset.detach().cpu().numpy().astype(float), blocks, targets)
        with torch.no_grad():
            act.offset.copy_(torch.as_tensor(offsets, dtype=act.offset.dtype))


def _calibrate_classes(generators, run, blocks, class_targets, rng):
    """Per-class shifts (:func:`calibrate_generators` with class-conditional targets):
    for each class in the support of the class prior (the labels the fit's fake rows
    take), :data:`CALIBRATION_ROWS` latent draws from ``rng`` with that label; a class
    the prior never draws keeps a zero shift."""
    import torch

    support = run.prior.detach().cpu().numpy() > 0
    for g, act, p, _, z in _generators_with_latents(generators, run, rng):
        base = act.offset.detach().cpu().numpy().astype(float)
        shifts = []
        for k, targets in enumerate(class_targets):
            if not support[k]:
                shifts.append(np.zeros_like(base))
                continue

            def draw(k=k, p=p, z=z):
                return z(), torch.full((CALIBRATION_ROWS,), k, dtype=torch.long, device=p.device)

            H = pre_activations(g, act, draw)
            shifts.append(calibrate(H, base, blocks, targets) - base)
        with torch.no_grad():
            act.class_offset.copy_(torch.as_tensor(np.array(shifts), dtype=act.offset.dtype))

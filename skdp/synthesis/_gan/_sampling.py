"""Sampling from a fitted :class:`~skdp.synthesis.DPGANSynthesizer` (post-processing).

Everything here reads only the fitted generators, the frozen decoder, the public schema
and encoder, the DP/public class prior and a caller's random generator: no private row.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

__all__ = ["class_codes", "codes_of_counts", "decode", "generate", "latent"]

#: Rows generated per batch in ``sample``.
SAMPLE_CHUNK = 4096


def latent(m, dim, distribution, gen, dtype):
    """``m`` latent draws on the generator's device (``N(0, I)`` or ``U(-1, 1)``)."""
    import torch

    if distribution == "uniform":
        return torch.rand((m, dim), generator=gen, dtype=dtype, device=gen.device) * 2.0 - 1.0
    return torch.randn((m, dim), generator=gen, dtype=dtype, device=gen.device)


def generate(generators, decoder, n_samples, codes, rng, *, latent_dim, latent_distribution, width):
    """Encoded synthetic rows, evenly from ``generators`` (each row's generator at random).

    Parameters
    ----------
    generators : list of torch.nn.Module
    decoder : torch.nn.Module or None
    n_samples : int
    codes : ndarray of int or None
        Label code of each row (conditional models): row ``i`` is generated for
        ``codes[i]``.
    rng : numpy.random.Generator
    latent_dim : int
    latent_distribution : {"normal", "uniform"}
    width : int
        Encoded width of a row.
    """
    import torch

    from skdp.utils._torch import to_numpy, torch_generator

    G = len(generators)
    p = next(generators[0].parameters())
    counts = np.full(G, n_samples // G)
    counts[: n_samples % G] += 1
    # rows are dealt to the generators in a random order (so no generator owns a block of
    # the output), and each row keeps its own label code
    order = rng.permutation(n_samples) if G > 1 else np.arange(n_samples)
    out = np.empty((n_samples, width))
    tgen = torch_generator(rng, "cpu")
    pos = 0
    with torch.no_grad():
        for g, cnt in zip(generators, counts, strict=True):
            for start in range(0, int(cnt), SAMPLE_CHUNK):
                m = min(SAMPLE_CHUNK, int(cnt) - start)
                idx = order[pos : pos + m]
                z = latent(m, latent_dim, latent_distribution, tgen, p.dtype)
                c = None
                if codes is not None:
                    c = torch.as_tensor(codes[idx], dtype=torch.long).to(p.device)
                h = g(z.to(p.device), c)
                if decoder is not None:
                    h = decoder(h)
                out[idx] = to_numpy(h)
                pos += m
    return out


def decode(encoder, schema, Z, integer_rounding):
    """Records of the training input's type from encoded rows ``Z``.

    ``integer_rounding="floor"`` floors integer columns (Beaulieu-Jones et al. 2019);
    ``"round"`` leaves the rounding to the encoder.
    """
    if integer_rounding == "floor":
        Z = Z.copy()
        for c in schema:
            if c.kind == "integer":
                j = encoder.slices_[c.name].start
                x = np.floor((Z[:, j] - encoder.offset_[c.name]) / encoder.scale_[c.name])
                Z[:, j] = encoder.scale_[c.name] * x + encoder.offset_[c.name]
    return encoder.inverse_transform(Z)


def class_codes(classes, y, n_samples):
    """Codes (indices into ``classes``) of one label or an array of ``n_samples`` labels."""
    lookup = {c.item() if isinstance(c, np.generic) else c: i for i, c in enumerate(classes)}
    arr = np.asarray(y, dtype=object)
    if arr.ndim == 0:
        arr = np.full(n_samples, arr.item(), dtype=object)
    if arr.ndim != 1 or arr.size != n_samples:
        raise ValueError("y must be one label or have length n_samples")
    try:
        return np.array(
            [lookup[v.item() if isinstance(v, np.generic) else v] for v in arr], dtype=int
        )
    except (KeyError, TypeError):
        raise ValueError("y contains labels that are not in classes_") from None


def codes_of_counts(classes, counts):
    """Codes of ``counts[c]`` rows of each class ``c`` (a dict {class: count})."""
    lookup = {c.item() if isinstance(c, np.generic) else c: i for i, c in enumerate(classes)}
    parts = []
    for cls, cnt in counts.items():
        if cls not in lookup:
            raise ValueError("y names a class that is not in classes_")
        if isinstance(cnt, bool) or not isinstance(cnt, Integral) or cnt < 0:
            raise ValueError("class counts must be non-negative integers")
        parts.append(np.full(int(cnt), lookup[cls]))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=int)

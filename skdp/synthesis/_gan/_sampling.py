"""Sampling from a fitted :class:`~skdp.synthesis.DPGANSynthesizer` (post-processing).

Everything here reads only the fitted generators, the frozen decoder, the public schema
and encoder, the DP/public class prior and a caller's random generator: no private row.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils.metaestimators import available_if

from skdp.synthesis._gan._encoding import BinnedEncoder, draw_rows
from skdp.utils._random import make_rng
from skdp.utils._sklearn_compat import check_is_fitted
from skdp.utils.validation import check_n_samples

__all__ = [
    "GANSamplingMixin",
    "class_codes",
    "codes_of_counts",
    "decode",
    "draw_discrete",
    "generate",
    "latent",
]

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


def draw_discrete(encoder, schema, Z, rng):
    """Draw the level of every binary and categorical column from the generator's output.

    The generator emits a probability for a binary coordinate (sigmoid) and a
    distribution over the levels of a one-hot block (softmax); a level is drawn from
    them (``Bernoulli(p)``, ``Categorical(p)``) and written back as a hard code, instead
    of thresholding at 1/2 or taking the argmax. A thresholded generator that learned a
    rare level's probability (a 5 % class, say) would never emit it: the synthetic column
    would come out constant. Post-processing of the generator's output.
    """
    a, b = encoder.numeric_range
    Z = np.array(Z, dtype=float, copy=True)
    for c in schema:
        sl = encoder.slices_[c.name]
        if c.kind == "binary":
            p = np.clip((Z[:, sl.start] - a) / (b - a), 0.0, 1.0)
            p = np.where(np.isfinite(p), p, 0.5)
            Z[:, sl.start] = np.where(rng.random(Z.shape[0]) < p, b, a)
        elif c.kind == "categorical" and encoder.categorical == "onehot":
            P = (Z[:, sl] - a) / (b - a)
            k = draw_rows(np.where(np.isfinite(P), P, 0.0), rng)
            block = np.full(P.shape, a)
            block[np.arange(Z.shape[0]), k] = b
            Z[:, sl] = block
    return Z


def decode(encoder, schema, Z, integer_rounding, rng=None):
    """Records of the training input's type from encoded rows ``Z``.

    ``integer_rounding="floor"`` floors integer columns (Beaulieu-Jones et al. 2019);
    ``"round"`` leaves the rounding to the encoder. With ``rng``, binary and categorical
    levels are drawn from the generator's probabilities (:func:`draw_discrete`).
    """
    if isinstance(encoder, BinnedEncoder):  # it draws and decodes itself
        return encoder.decode(Z, rng)
    if rng is not None:
        Z = draw_discrete(encoder, schema, Z, rng)
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


class GANSamplingMixin:
    """``sample`` and ``sample_labeled`` of :class:`~skdp.synthesis.DPGANSynthesizer`
    (post-processing of the fitted generators, decoder, schema and class prior)."""

    def _n_samples(self, n_samples):
        return check_n_samples(n_samples, getattr(self, "n_features_in_", 1))

    def sample(self, n_samples=1, *, random_state=None):
        """Draw synthetic records (post-processing: costs no privacy).

        Parameters
        ----------
        n_samples : int, default=1
        random_state : None, int, SeedSequence or Generator, default=None
            ``None``: fresh OS entropy (the fitted model keeps no generator).

        Returns
        -------
        X_syn : DataFrame or ndarray of shape (n_samples, n_features)
            The training input's type, columns and dtypes. A conditional model draws the
            labels from ``class_prior_`` and drops them (:meth:`sample_labeled` returns
            them). Binary and categorical levels are drawn from the generator's output
            probabilities (sigmoid, softmax), not thresholded, so a level the generator
            gives a small probability still appears at about that rate. With the binned
            encoding, a numeric value's bin is drawn the same way and the rows of one
            call that share a bin get uniform positions inside it in the order of the
            generator's positions (:func:`~skdp.synthesis._gan._encoding.spread_positions`).
        """
        check_is_fitted(self)
        rng = make_rng(random_state)
        n_samples = self._n_samples(n_samples)
        codes = None
        if self.classes_ is not None:
            codes = rng.choice(len(self.classes_), size=n_samples, p=self.class_prior_)
        return self._decode(self._generate(n_samples, codes, rng), rng)

    @available_if(lambda self: self.conditional == "acgan")
    def sample_labeled(self, n_samples=1, *, y=None, random_state=None):
        """Draw synthetic records with their labels (conditional models only).

        Parameters
        ----------
        n_samples : int, default=1
        y : None, a class label, array-like of labels, or dict {class: count}, optional
            ``None`` draws labels from ``class_prior_``; one label conditions every row on
            that class; an array (length ``n_samples``) gives each row's class; a dict
            gives counts per class (``n_samples`` is then ignored).
        random_state : None, int, SeedSequence or Generator, default=None
            ``None``: fresh OS entropy.

        Returns
        -------
        X_syn : DataFrame or ndarray of shape (n_samples, n_features)
        y_syn : ndarray of shape (n_samples,)
            The labels the rows were generated for.
        """
        check_is_fitted(self)
        rng = make_rng(random_state)
        if isinstance(y, dict):
            codes = codes_of_counts(self.classes_, y)
            n_samples = codes.size
        else:
            n_samples = self._n_samples(n_samples)
            if y is None:
                codes = rng.choice(len(self.classes_), size=n_samples, p=self.class_prior_)
            else:
                codes = class_codes(self.classes_, y, n_samples)
        X_syn = self._decode(self._generate(n_samples, codes, rng), rng)
        return X_syn, self.classes_[codes]

    def _generate(self, n_samples, codes, rng):
        """Encoded synthetic rows, evenly from ``generators_``, row ``i`` for ``codes[i]``."""
        return generate(
            self.generators_,
            self.decoder_,
            n_samples,
            codes,
            rng,
            latent_dim=self.latent_dim,
            latent_distribution=self.latent_distribution,
            width=self.n_encoded_features_,
        )

    def _decode(self, Z, rng=None):
        return decode(self._encoder, self.schema_, Z, self.integer_rounding, rng)

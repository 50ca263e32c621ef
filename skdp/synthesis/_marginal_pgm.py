"""A graphical model on a junction tree fitted to noisy marginals (Private-PGM).

The estimation step of AIM (McKenna, Mullins, Sheldon & Miklau 2022) after McKenna,
Sheldon & Miklau (2019): the measured column sets are joined into a chordal graph
(greedy min-fill triangulation), whose maximal cliques form a junction tree; the
model ``p(x) = prod_C exp(theta_C(x_C)) / Z`` is fitted by entropic mirror descent to
the weighted least-squares loss ``sum_m w_m ||n_hat p_m - y_m||^2 / 2`` over every
noisy measurement ``y_m`` (1-way and larger), with exact marginals from belief
propagation. Everything here is post-processing of noisy releases.
"""

from __future__ import annotations

import functools
import math
from itertools import combinations

import numpy as np

from skdp.synthesis._marginal_model import _DisjointSet

__all__ = ["JunctionTree", "fit_model", "triangulate"]


def triangulate(sizes, sets):
    """Maximal cliques of a chordal completion of the graph joining each set's columns.

    Greedy elimination: the vertex whose elimination adds the fewest fill-in edges
    (ties: the smallest clique in cells, then the lowest index). Columns in no set
    are singleton cliques. Cliques are sorted tuples.
    """
    d = len(sizes)
    adj = [set() for _ in range(d)]
    for s in sets:
        for a, b in combinations(s, 2):
            adj[a].add(b)
            adj[b].add(a)
    remaining = set(range(d))
    found = []
    while remaining:
        best = None
        for v in remaining:
            nb = adj[v] & remaining
            fill = sum(1 for a, b in combinations(nb, 2) if b not in adj[a])
            cells = math.prod(sizes[u] for u in nb) * sizes[v]
            key = (fill, cells, v)
            if best is None or key < best[0]:
                best = (key, v, nb)
        _, v, nb = best
        for a, b in combinations(nb, 2):
            adj[a].add(b)
            adj[b].add(a)
        remaining.discard(v)
        found.append(frozenset(nb | {v}))
    maximal = []
    for c in found:
        if not any(c < o for o in found) and c not in maximal:
            maximal.append(c)
    return sorted(tuple(sorted(c)) for c in maximal)


@functools.lru_cache(maxsize=65536)
def _broadcast_shape(sub, cols, sizes):
    return tuple(sizes[c] if c in sub else 1 for c in cols)


@functools.lru_cache(maxsize=65536)
def _other_axes(cols, sub):
    return tuple(i for i, c in enumerate(cols) if c not in sub)


def _expand(table, sub, cols, sizes):
    """``table`` over the sorted columns ``sub`` reshaped to broadcast over ``cols``
    (``sizes``: a tuple, so that the shape is computed once per triple)."""
    return table.reshape(_broadcast_shape(tuple(sub), tuple(cols), tuple(sizes)))


def _sum_to(table, cols, sub):
    axes = _other_axes(tuple(cols), tuple(sub))
    return table.sum(axis=axes) if axes else table


def _lse_to(logt, cols, sub):
    axes = _other_axes(tuple(cols), tuple(sub))
    if not axes:
        return logt
    m = logt.max(axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return np.log(np.exp(logt - m).sum(axis=axes)) + np.squeeze(m, axis=axes)


class JunctionTree:
    """Cliques (sorted tuples) joined into a tree by maximum separator size.

    ``order`` is a breadth-first order from clique 0, ``parent[k]`` the parent of clique
    ``k`` (``None`` for the root) and ``sep[k]`` the separator with its parent (sorted;
    empty between parts of the model that share no column).
    """

    def __init__(self, cliques, sizes):
        self.cliques = [tuple(c) for c in cliques]
        self.sizes = tuple(sizes)
        m = len(self.cliques)
        sets = [set(c) for c in self.cliques]
        pairs = sorted(
            ((len(sets[i] & sets[j]), i, j) for i in range(m) for j in range(i + 1, m)),
            key=lambda t: (-t[0], t[1], t[2]),
        )
        parts = _DisjointSet(m)  # Kruskal's maximum spanning tree on separator sizes
        adj = [[] for _ in range(m)]
        for _, i, j in pairs:
            if parts.find(i) != parts.find(j):
                parts.union(i, j)
                adj[i].append(j)
                adj[j].append(i)
        self.parent = [None] * m
        self.children = [[] for _ in range(m)]
        self.order = []
        seen = [False] * m
        queue = [0] if m else []
        if m:
            seen[0] = True
        while queue:
            k = queue.pop(0)
            self.order.append(k)
            for o in sorted(adj[k]):
                if not seen[o]:
                    seen[o] = True
                    self.parent[o] = k
                    self.children[k].append(o)
                    queue.append(o)
        self.sep = [
            tuple(sorted(sets[k] & sets[self.parent[k]])) if self.parent[k] is not None else ()
            for k in range(m)
        ]
        self.shapes = [tuple(self.sizes[j] for j in c) for c in self.cliques]
        self._sets = sets
        self.depth = [0] * m
        for k in self.order:
            if self.parent[k] is not None:
                self.depth[k] = self.depth[self.parent[k]] + 1
        self._homes = {}

    def home(self, cols):
        """Index of the smallest clique containing the columns ``cols`` (or None)."""
        cols = tuple(cols)
        if cols not in self._homes:
            s = set(cols)
            best = None
            for k, c in enumerate(self._sets):
                if s <= c and (best is None or len(c) < len(self._sets[best])):
                    best = k
            self._homes[cols] = best
        return self._homes[cols]

    def calibrate(self, theta):
        """Clique marginals (probabilities) of ``exp(sum theta)`` by belief propagation."""
        cl, sep, sz = self.cliques, self.sep, self.sizes
        up, partial = {}, {}
        for k in reversed(self.order):
            b = theta[k]
            for c in self.children[k]:
                b = b + _expand(up[c], sep[c], cl[k], sz)
            partial[k] = b
            if self.parent[k] is not None:
                up[k] = _lse_to(b, cl[k], sep[k])
        beliefs, down = {}, {}
        for k in self.order:
            b = partial[k]
            if self.parent[k] is not None:
                b = b + _expand(down[k], sep[k], cl[k], sz)
            beliefs[k] = b
            for c in self.children[k]:
                e = _expand(up[c], sep[c], cl[k], sz)
                with np.errstate(invalid="ignore"):
                    diff = np.where(np.isneginf(e), -np.inf, b - e)
                down[c] = _lse_to(diff, cl[k], sep[c])
        mu = []
        for k in range(len(cl)):
            b = beliefs[k]
            b = b - b.max()
            p = np.exp(b)
            mu.append(p / p.sum())
        return mu

    def marginal(self, mu, cols, cache=None):
        """The model's distribution of the sorted columns ``cols`` (exact).

        ``cache``: a dict kept by the caller across calls with the same ``mu``, for the
        clique conditionals that several queries share (e.g. one per candidate)."""
        cols = tuple(cols)
        k = self.home(cols)
        if k is not None:
            return _sum_to(mu[k], self.cliques[k], cols)
        # the smallest subtree whose cliques hold every column of ``cols``
        want = set(cols)
        anchors = [self.home((j,)) for j in cols]
        path = set()
        depth = self.depth
        nodes = set(anchors)
        top = anchors[0]
        for a in anchors[1:]:
            x, y = top, a
            while x != y:
                if depth[x] >= depth[y]:
                    path.add(x)
                    x = self.parent[x]
                else:
                    path.add(y)
                    y = self.parent[y]
            path.add(x)
            top = x
        nodes |= path
        sz = self.sizes

        def collect(k):
            """Factor over sep(k) and the wanted columns in k's part of the subtree."""
            own = set(self.sep[k]) if k != top else set()
            linked = set().union(*(self.sep[c] for c in self.children[k] if c in nodes))
            # first sum out the clique's columns that nothing below or above needs
            cl = tuple(j for j in self.cliques[k] if j in want | own | linked)
            key = (k, cl, k == top)
            if cache is not None and key in cache:
                table = cache[key]
            else:
                table = _sum_to(mu[k], self.cliques[k], cl)
                if k != top:
                    # the conditional given the separator (each entry <= 1; a tiny
                    # separator mass would overflow as a reciprocal)
                    s = _expand(_sum_to(table, cl, self.sep[k]), self.sep[k], cl, sz)
                    s = np.broadcast_to(s, table.shape)
                    table = np.divide(table, s, out=np.zeros_like(table), where=s > 0)
                if cache is not None:
                    cache[key] = table
            fcols, f = cl, table
            below = [c for c in self.children[k] if c in nodes]
            for i, c in enumerate(below):
                gcols, g = collect(c)
                ucols = tuple(sorted(set(fcols) | set(gcols)))
                f = _expand(f, fcols, ucols, sz) * _expand(g, gcols, ucols, sz)
                # sum out at once what neither the result nor a later child needs
                later = set().union(*(self.sep[o] for o in below[i + 1 :]))
                fcols = tuple(j for j in ucols if j in want or j in own or j in later)
                f = _sum_to(f, ucols, fcols)
            out = tuple(j for j in fcols if j in want or j in own)
            return out, _sum_to(f, fcols, out)

        fcols, f = collect(top)
        return f if fcols == cols else np.transpose(f, [fcols.index(j) for j in cols])

    def sampling_order(self, mu, node_fallback):
        """``(sep, new, conditional)`` per clique in breadth-first order (ancestral
        sampling: the new columns given the separator, C-order cells)."""
        out = []
        for k in self.order:
            c = self.cliques[k]
            sep = self.sep[k]
            new = tuple(j for j in c if j not in sep)
            perm = [c.index(j) for j in sep + new]
            X = np.transpose(mu[k], perm).reshape(
                math.prod(self.sizes[j] for j in sep), math.prod(self.sizes[j] for j in new)
            )
            fallback = node_fallback[new[0]]
            for j in new[1:]:
                fallback = np.multiply.outer(fallback, node_fallback[j])
            fallback = np.ravel(fallback)
            rows = X.sum(axis=1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                cond = np.where(rows > 0, X / np.where(rows > 0, rows, 1.0), fallback[None, :])
            out.append((sep, new, cond))
        return out


def fit_model(sizes, measurements, n_hat, *, n_iter=500, init=None, tree=None):
    """Fit the junction-tree model to the measurements by entropic mirror descent.

    Minimises ``sum_m ||w_m^(1/2) (n_hat mu_m - y_m)||^2 / 2`` over the model's
    distributions ``mu`` (``mu_m``: its marginal on measurement ``m``'s columns): the
    log-potentials move against the gradient in ``mu`` (mirror descent with the
    entropy, as in Private-PGM), with Nesterov's momentum and adaptive restart
    (O'Donoghue & Candes 2015) and a step size that is halved until the loss does not
    increase and grows by 1.2 after each accepted step. Every step is one exact belief
    propagation. Post-processing of the noisy measurements.

    Parameters
    ----------
    sizes : list of int
        Domain size of every column.
    measurements : list of (cols, y, w)
        Sorted column tuple, noisy counts over them (axes in ``cols`` order) and the
        weight of each cell (``1 / variance``; scalar or array).
    n_hat : float
        Total number of rows (noisy estimate).
    n_iter : int
        Mirror-descent steps.
    init : tuple (JunctionTree, list of ndarray), optional
        A previous fit (its structure and clique marginals) to warm-start from.
    tree : JunctionTree, optional
        The structure; by default the triangulation of the measured sets.

    Returns
    -------
    tree : JunctionTree
    theta : list of ndarray
        Log-potentials per clique.
    mu : list of ndarray
        Clique marginals (probabilities).
    """
    if tree is None:
        tree = JunctionTree(triangulate(sizes, [m[0] for m in measurements]), sizes)
    measurements = _pool(measurements)
    homes = [tree.home(cols) for cols, _, _ in measurements]
    targets = [np.asarray(y, float) / n_hat for _, y, _ in measurements]
    weights = [np.asarray(w, float) * n_hat**2 for _, _, w in measurements]
    if init is not None:
        theta = _warm_start(tree, *init)
    else:
        theta = [np.zeros(s) for s in tree.shapes]
    mu = tree.calibrate(theta)

    def loss_grad(mu):
        loss = 0.0
        grads = [np.zeros(s) for s in tree.shapes]
        for (cols, _, _), k, t, w in zip(measurements, homes, targets, weights, strict=True):
            m = _sum_to(mu[k], tree.cliques[k], cols)
            r = m - t
            loss += 0.5 * float((w * r * r).sum())
            grads[k] = grads[k] + _expand(w * r, cols, tree.cliques[k], tree.sizes)
        return loss, grads

    # step size: the inverse of the largest total weight on one clique, then adapted
    load = [0.0] * len(tree.cliques)
    for w, h in zip(weights, homes, strict=True):
        load[h] += float(np.max(w))
    alpha = 1.0 / max(max(load), 1e-300)
    loss, grad = loss_grad(mu)
    velocity = [np.zeros(s) for s in tree.shapes]
    t = 1.0
    history = [loss]
    for _ in range(n_iter):
        # Nesterov's look-ahead with adaptive restart (O'Donoghue & Candes 2015)
        t_next = (1 + math.sqrt(1 + 4 * t * t)) / 2
        mom = (t - 1) / t_next
        look = [a + mom * v for a, v in zip(theta, velocity, strict=True)]
        mu_l = tree.calibrate(look) if mom > 0 else mu
        loss_l, grad_l = loss_grad(mu_l) if mom > 0 else (loss, grad)
        for _ in range(60):  # backtrack until the step does not increase the loss
            cand = [a - alpha * g for a, g in zip(look, grad_l, strict=True)]
            mu_c = tree.calibrate(cand)
            loss_c, grad_c = loss_grad(mu_c)
            if loss_c <= loss_l:
                break
            alpha *= 0.5
        else:
            break
        if loss_c > loss:  # the momentum overshot: restart from a plain step
            velocity = [np.zeros(s) for s in tree.shapes]
            t = 1.0
            continue
        t = t_next
        velocity = [c - a for c, a in zip(cand, theta, strict=True)]
        theta, mu, loss, grad = cand, mu_c, loss_c, grad_c
        alpha *= 1.2
        history.append(loss)
        # converged: ten accepted steps gained less than a millionth of the loss
        if len(history) > _STALL_STEPS and history[-_STALL_STEPS - 1] - loss <= _STALL_RTOL * loss:
            break
    return tree, theta, mu


def _pool(measurements):
    """One measurement per column set: the weighted mean of its measurements with the
    summed weights (the same loss up to a constant, so the same fit and gradient)."""
    pooled = {}
    for cols, y, w in measurements:
        y = np.asarray(y, float)
        w = np.broadcast_to(np.asarray(w, float), y.shape)
        if cols in pooled:
            sw, swy = pooled[cols]
            pooled[cols] = (sw + w, swy + w * y)
        else:
            pooled[cols] = (w, w * y)
    out = []
    for cols, (sw, swy) in pooled.items():
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(sw > 0, swy / np.where(sw > 0, sw, 1.0), 0.0)
        out.append((cols, mean, sw))
    return out


#: mirror descent stops when this many accepted steps lowered the loss by less than
#: ``_STALL_RTOL`` of it
_STALL_STEPS, _STALL_RTOL = 10, 1e-6


def _warm_start(tree, old_tree, old_mu):
    """Log-potentials of ``tree`` that reproduce the old model where it can: each old
    clique's log-marginal minus its separator's, placed on a new clique containing it."""
    theta = [np.zeros(s) for s in tree.shapes]
    for k, c in enumerate(old_tree.cliques):
        h = tree.home(c)
        if h is None:  # the new triangulation split it: keep its columns' margins
            for j in c:
                if j in old_tree.sep[k]:
                    continue
                hj = tree.home((j,))
                lm = np.log(np.maximum(_sum_to(old_mu[k], c, (j,)), 1e-300))
                theta[hj] = theta[hj] + _expand(lm, (j,), tree.cliques[hj], tree.sizes)
            continue
        with np.errstate(divide="ignore"):
            lt = np.log(np.maximum(old_mu[k], 1e-300))
            if old_tree.parent[k] is not None:
                s = _sum_to(old_mu[k], c, old_tree.sep[k])
                lt = lt - _expand(np.log(np.maximum(s, 1e-300)), old_tree.sep[k], c, old_tree.sizes)
        theta[h] = theta[h] + _expand(lt, c, tree.cliques[h], tree.sizes)
    return theta

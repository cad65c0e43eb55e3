"""Pareto frontiers (every objective minimized) and top-k selection.

``pareto_2d``: O(n log n): sort by (x, y); a point is on the frontier when its y is
the smallest of its x-group and strictly below every y of a smaller x.

``pareto_front``: any number of objectives. Duplicate points are merged first;
then, repeatedly, the lexicographically smallest remaining point is
non-dominated (nothing remaining is <= it everywhere without being equal), joins
the frontier and removes every remaining point it dominates. O(n k h) for h
frontier points, each step one vectorized pass.

A point dominates another when it is <= in every objective and < in one; equal
points do not dominate each other, so duplicates of a frontier point are all on
the frontier.
"""

from __future__ import annotations

import numpy as np


def pareto_2d(x, y) -> np.ndarray:
    """Indices of the non-dominated points of (x, y), ordered by x then y then index."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((np.arange(n), y, x))
    xs, ys = x[order], y[order]
    first = np.empty(n, dtype=bool)
    first[0] = True
    first[1:] = xs[1:] != xs[:-1]
    group = np.cumsum(first) - 1
    gmin = ys[first]                                   # smallest y of each x-group
    before = np.concatenate(([np.inf], np.minimum.accumulate(gmin)[:-1]))
    keep = (ys == gmin[group]) & (ys < before[group])
    return order[keep].astype(np.int64)


def pareto_front(points) -> np.ndarray:
    """Indices of the non-dominated rows of ``points`` (n x k), in lexicographic order of the rows."""
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2:
        raise ValueError("points must be an n x k array")
    n, k = pts.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if np.isnan(pts).any():                # NaN is never >= itself: the sweep below would not end
        raise ValueError("points contain NaN")
    if k == 1:
        idx = np.flatnonzero(pts[:, 0] == pts[:, 0].min())
        return idx.astype(np.int64)
    if k == 2:
        return pareto_2d(pts[:, 0], pts[:, 1])
    uniq, inverse = np.unique(pts, axis=0, return_inverse=True)   # rows in lexicographic order
    inverse = inverse.reshape(-1)
    remaining = np.arange(len(uniq))
    front = []
    while remaining.size:
        i = remaining[0]
        front.append(i)
        dominated = np.all(uniq[remaining] >= uniq[i], axis=1)       # includes i itself
        remaining = remaining[~dominated]
    on = np.zeros(len(uniq), dtype=bool)
    on[front] = True
    idx = np.flatnonzero(on[inverse])
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.asarray(front)] = np.arange(len(front))
    return idx[np.lexsort((idx, rank[inverse[idx]]))].astype(np.int64)


def dominates(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return bool(np.all(a <= b) and np.any(a < b))


def top_k(values, k: int, tiebreak=None) -> np.ndarray:
    """Indices of the k smallest ``values``, ties by ``tiebreak`` (default: position), deterministic."""
    values = np.asarray(values)
    n = len(values)
    if k <= 0 or n == 0:
        return np.zeros(0, dtype=np.int64)
    tb = np.arange(n) if tiebreak is None else np.asarray(tiebreak)
    if n > k:
        kth = np.partition(values, k - 1)[k - 1]
        cand = np.flatnonzero(values <= kth)
    else:
        cand = np.arange(n)
    order = np.lexsort((tb[cand], values[cand]))
    return cand[order[:k]].astype(np.int64)

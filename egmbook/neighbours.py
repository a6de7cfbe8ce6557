"""Neighbouring datasets the book's privacy checks attack (the report's Definition 2.1).

Each function returns a :class:`NeighbourPair`: two datasets of the same shape that differ
in their last row.

* :func:`worst_case_pair` -- Algorithm 3's worst case: one row far outside the clipping
  ball, on opposite sides of the centre in the two datasets, so that the clipped sums
  differ by the full sensitivity 2 C (chapter 7a's white-box check and chapter 7b's audit).
* :func:`constant_column_pair` -- ordinary rows with an intercept-like constant column;
  the neighbour moves that column's entry in one row.  A private scale of a constant column
  sits at its floor, and whitening by it puts the rows about 1e11 times their spread from
  the origin, where CoinPress's old distance formula cancelled and let rows escape their
  clip (issue 25: chapter 8's pipeline leaked on this pair).
* :func:`far_from_origin_pair` -- every entry the same value far from the origin of its
  box, one entry moved by a tiny amount (issue 25: the robust pipeline's centre leaked on
  this pair).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmbook import experiments
from egmlib import scaling
from egmlib import validation as _v

__all__ = ["NeighbourPair", "constant_column_pair", "far_from_origin_pair", "worst_case_pair"]

_PER_SIGMA = "one entry per entry of sigma"

#: Largest dataset of a pair (two dense n x d arrays are built).
_N_MAX = 10**8


class NeighbourPair(NamedTuple):
    """Two neighbouring datasets (Definition 2.1: they differ in one row)."""

    X: NDArray[np.float64]  #: (n, d)
    X_prime: NDArray[np.float64]  #: (n, d), equal to X except in the last row


def worst_case_pair(
    sigma: ArrayLike,
    *,
    n: int,
    rng: np.random.Generator,
    mu_hat: ArrayLike | None = None,
    p_clip: float | None = None,
    far: float = 10.0,
) -> NeighbourPair:
    """Neighbouring datasets X ~ X' of Algorithm 3 whose clipped sums differ by 2 C.

    n - 1 shared rows from the model N(mu_hat, diag(sigma^2)), plus one row that
    lies far outside the clipping ball on opposite sides of mu_hat:
    x = mu_hat + far C u / b and x' = mu_hat - far C u / b, with b Lemma 4.1's
    scaling, C the radius at p_clip (default 1/n) and u a random unit vector of
    the transformed space.  Both are clipped, to +-C u, so the transformed
    clipped sums differ by exactly 2 C u: the sensitivity of Section 4 is attained.

    Random numbers: u first (d normals), then the shared rows.

    Returns
    -------
    NeighbourPair
        ``(X, X_prime)``: two (n, d) arrays that differ in the last row only.
    """
    sigma = _v.check_positive_vector("sigma", sigma)
    d = sigma.size
    mu_hat = np.zeros(d) if mu_hat is None else _v.check_finite_vector("mu_hat", mu_hat, length=d, of=_PER_SIGMA)
    n = _v.check_count("n", n, minimum=2, maximum=_N_MAX)
    rng = _v.check_rng("rng", rng)
    p = _v.check_probability("p_clip", 1.0 / n if p_clip is None else p_clip)
    far = _v.check_positive_finite("far", far)
    if not far > 1.0:
        raise ValueError(f"far must be > 1 (the row must lie outside the ball), got far={far!r}")
    b = scaling.algorithm3_scaling(sigma)
    Ct = math.sqrt(experiments.clipping_radii(sigma, p=p).Ct_squared)
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    with np.errstate(over="ignore"):
        shared = rng.standard_normal((n - 1, d)) * sigma + mu_hat
        row = mu_hat + far * Ct * u / b
        X = np.vstack([shared, row])
        Xp = np.vstack([shared, 2.0 * mu_hat - row])
    _v.check_finite_result([X, Xp], what="the neighbouring datasets", inputs="sigma, mu_hat or far")
    return NeighbourPair(X, Xp)


def constant_column_pair(*, n: int, d: int, rng: np.random.Generator, moved_to: float = 15.0,
                         ) -> NeighbourPair:
    """n rows with column 0 equal to 1 and the others N(0, 1); X' moves the last row's 1 to ``moved_to``.

    The pair of issue 25's probe of chapter 8's pipeline (n = 4000, d = 4 in the box
    [-20, 20]): Definition 2.1's neighbours that differ in one entry of an intercept-like column.

    Examples
    --------
    >>> X, Xp = constant_column_pair(n=5, d=2, rng=np.random.default_rng(0))
    >>> X[:, 0].tolist(), float(Xp[-1, 0])
    ([1.0, 1.0, 1.0, 1.0, 1.0], 15.0)
    """
    n = _v.check_count("n", n, minimum=2, maximum=_N_MAX)
    d = _v.check_count("d", d, minimum=1, maximum=10**6)
    rng = _v.check_rng("rng", rng)
    moved_to = _v.check_real("moved_to", moved_to)
    if not math.isfinite(moved_to) or moved_to == 1.0:
        raise ValueError(f"moved_to must be finite and not 1 (the column's value), got moved_to={moved_to!r}")
    X = rng.standard_normal((n, d))
    X[:, 0] = 1.0
    Xp = X.copy()
    Xp[-1, 0] = moved_to
    return NeighbourPair(X, Xp)


def far_from_origin_pair(*, n: int, d: int, value: float = 5000.0, move: float = 1e-4) -> NeighbourPair:
    """Every entry equal to ``value``; X' moves the last row's first entry by ``move``.

    The pair of issue 25's probe of the robust pipeline (``value`` = 5000 in the box
    [0, 1e4]): the data's spread is 0, so every private scale sits at its floor and the
    whitened rows lie about 1e11 spreads from the origin.

    Examples
    --------
    >>> X, Xp = far_from_origin_pair(n=3, d=2)
    >>> float(Xp[-1, 0] - X[-1, 0]) > 0, X.shape
    (True, (3, 2))
    """
    n = _v.check_count("n", n, minimum=2, maximum=_N_MAX)
    d = _v.check_count("d", d, minimum=1, maximum=10**6)
    value = _v.check_real("value", value)
    move = _v.check_real("move", move)
    if not (math.isfinite(value) and math.isfinite(move) and move != 0.0):
        raise ValueError(f"value and move must be finite and move not 0, got value={value!r}, move={move!r}")
    X = np.full((n, d), value)
    Xp = X.copy()
    Xp[-1, 0] = value + move
    if Xp[-1, 0] == value:
        raise ValueError(f"move must change the entry in float64, got value={value!r}, move={move!r}")
    return NeighbourPair(X, Xp)

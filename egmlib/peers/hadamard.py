r"""The randomised Hadamard rotation used by IOME.

Huang, Liang and Yi (2021, Section 4) first rotate the data with
:math:`R = H D_t \cdots H D_1`, where :math:`H` is the normalised
:math:`N\times N` Walsh-Hadamard matrix (:math:`H^2 = I`) and the :math:`D_r` are
diagonal matrices of independent uniform random signs, so that every coordinate of
:math:`R x` is a sum of many coordinates of :math:`x` and concentrates.  PLAN's
experiments (Aumuller et al. 2024) use :math:`t = 3` rounds.  :math:`R` is orthogonal,
so :math:`\ell_2` norms and errors are the same before and after rotating; it is drawn
independently of the data and costs no privacy budget.

Dimensions that are not a power of two are zero-padded to the next one, :math:`N`.

The transform is applied to all rows at once as a Kronecker product of two Hadamard
matrices of size about :math:`\sqrt N` (see :func:`hadamard_transform`), so an
:math:`n\times N` array costs :math:`O(nN^{3/2})` flops in matrix products.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.linalg import hadamard as _sylvester

from egmlib import validation as _v
from egmlib.validation import FloatArray

__all__ = ["MAX_DIMENSION", "MAX_ROUNDS", "RandomizedHadamard", "hadamard_transform",
           "random_hadamard"]

#: Largest dimension d of a rotation (its signs take rounds * 2**24 * 8 bytes at most).
MAX_DIMENSION = 2**24
#: Most rounds of a rotation (PLAN's experiments use 3; more only cost time).
MAX_ROUNDS = 16


@lru_cache(maxsize=16)
def _factor(m: int) -> np.ndarray:
    H = _sylvester(m).astype(np.float64)
    H.setflags(write=False)
    return H


def _check_power_of_two(N: int) -> int:
    if N < 1 or N & (N - 1):
        raise ValueError(f"Y must have a last axis of power-of-two length, got length {N}")
    return N.bit_length() - 1


def _transform(Y: FloatArray, *, then: FloatArray | None = None) -> FloatArray:
    """The transform of :func:`hadamard_transform` without argument checks.

    ``then`` (signs +-1 of length N) multiplies the result by them in the same pass as
    the normalisation: ``_transform(Y) * then`` bit for bit (a sign flip is exact).
    """
    N = Y.shape[-1]
    k = _check_power_of_two(N)
    b = 1 << (k // 2)
    a = N // b
    rows = int(np.prod(Y.shape[:-1], dtype=np.int64))
    out = np.empty(Y.shape)
    with np.errstate(over="ignore", invalid="ignore"):  # callers check for overflow
        Z = (Y.reshape(-1, b) @ _factor(b)).reshape(rows, a, b)
        np.matmul(_factor(a), Z, out=out.reshape(rows, a, b))
        out *= (1.0 / math.sqrt(N)) if then is None else then * (1.0 / math.sqrt(N))
    return out


def hadamard_transform(Y: Any) -> FloatArray:
    r"""Normalised Walsh-Hadamard transform :math:`H y/\sqrt N` of every row of ``Y``.

    ``Y`` has shape (..., N) with N a power of two; the result has the same shape.  It
    is its own inverse: ``hadamard_transform(hadamard_transform(Y))`` equals ``Y`` to
    rounding (Sylvester ordering, as ``scipy.linalg.hadamard``).  With
    :math:`N = ab`, :math:`H_N = H_a\otimes H_b`, so a row read as an :math:`a\times b`
    matrix :math:`M` maps to :math:`H_a M H_b`: one matrix product over the last axis and
    one batched product over the middle axis.

    The rotation of IOME (Huang, Liang and Yi 2021, Section 4) is built from it
    (:class:`RandomizedHadamard`).

    Parameters
    ----------
    Y : array_like, shape (..., N), finite, N a power of two

    Returns
    -------
    numpy.ndarray, shape (..., N)

    Examples
    --------
    >>> hadamard_transform(np.array([1.0, 0.0, 0.0, 0.0])).tolist()
    [0.5, 0.5, 0.5, 0.5]
    """
    Y = _v.check_finite_array("Y", Y)
    if Y.ndim < 1:
        raise ValueError(f"Y must have at least one axis, got Y of shape {Y.shape}")
    out = _transform(Y)
    _v.check_finite_result(out, what="the Hadamard transform", inputs="Y")
    return out


@dataclass(frozen=True)
class RandomizedHadamard:
    r"""The rotation :math:`R = H D_t\cdots H D_1` on :math:`\mathbf R^N`, with zero padding from d.

    ``signs[r]`` is the diagonal of :math:`D_{r+1}`.
    """

    signs: FloatArray  #: (rounds, N) entries +-1
    d: int  #: dimension of the data (<= N)

    @property
    def padded_dim(self) -> int:
        """N, the next power of two >= d."""
        return int(self.signs.shape[1])

    def rotate(self, X: Any) -> FloatArray:
        """:math:`R x_i` for every row of the (n, d) array ``X``: an (n, N) array (IOME's step 1)."""
        X = _v.check_finite_data("X", X)
        if X.shape[1] != self.d:
            raise ValueError(f"X must have d={self.d} columns, got X of shape {X.shape}")
        Y = self._rotate(X)
        _v.check_finite_result(Y, what="the rotated data", inputs="X")
        return Y

    def _rotate(self, X: np.ndarray) -> FloatArray:
        """:meth:`rotate` without argument or overflow checks (callers check what they use)."""
        signs = self.signs
        if self.d == self.padded_dim:
            Y = X * signs[0]
        else:
            Y = np.zeros((X.shape[0], self.padded_dim))
            np.multiply(X, signs[0, :self.d], out=Y[:, :self.d])
        for r in range(signs.shape[0]):
            Y = _transform(Y, then=signs[r + 1] if r + 1 < signs.shape[0] else None)
        return Y

    def unrotate(self, y: Any) -> FloatArray:
        r""":math:`R^{-1}y = D_1 H\cdots D_t H y` of a vector of length N: its first d coordinates."""
        y = _v.check_finite_vector("y", y, length=self.padded_dim, of="the padded dimension N")
        for s in self.signs[::-1]:
            y = _transform(y) * s
        _v.check_finite_result(y, what="the unrotated vector", inputs="y")
        return y[:self.d]


def random_hadamard(d: int, *, rng: np.random.Generator, rounds: int = 3) -> RandomizedHadamard:
    r"""Draw :math:`R = H D_t\cdots H D_1` for dimension ``d`` (IOME, Huang, Liang and Yi 2021).

    Parameters
    ----------
    d : int in [1, MAX_DIMENSION]
    rng : numpy.random.Generator
    rounds : int in [1, MAX_ROUNDS], default 3 (PLAN's experiments)

    Examples
    --------
    >>> R = random_hadamard(3, rng=np.random.default_rng(0))
    >>> x = np.array([[1.0, 2.0, 3.0]])
    >>> R.padded_dim, bool(np.allclose(R.unrotate(R.rotate(x)[0]), x[0]))
    (4, True)
    """
    d = _v.check_count("d", d, maximum=MAX_DIMENSION)
    rounds = _v.check_count("rounds", rounds, maximum=MAX_ROUNDS)
    rng = _v.check_rng("rng", rng)
    N = 1 << (d - 1).bit_length()
    signs = np.where(rng.random((rounds, N)) < 0.5, -1.0, 1.0)
    signs.setflags(write=False)
    return RandomizedHadamard(signs=signs, d=d)

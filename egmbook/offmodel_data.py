r"""Data off Algorithm 3's model: real datasets that ship with scikit-learn, and synthetic families.

Algorithm 3 (and chapter 8's sweep) assumes rows :math:`x_i\sim\mathcal N(\mu,
\mathrm{diag}(\sigma^2))`.  This module supplies data that is not: every dataset is a
:class:`OffModelSpec` in :data:`DATASETS` (name -> spec) whose
:meth:`OffModelSpec.sample` returns an :class:`OffModelSample` from a seed.

Real data (no download: the files are inside the installed ``scikit-learn`` package, the
``data`` extra; the ``fetch_*`` loaders, which download, are never used):

=================  ===========  =======================================================
name               n x d        source (as scikit-learn's documentation names it)
=================  ===========  =======================================================
``digits``         1797 x 64    UCI Optical Recognition of Handwritten Digits (Alpaydin
                                and Kaynak 1998): 8x8 counts 0..16 of 32x32 bitmaps
``breast_cancer``  569 x 30     UCI Breast Cancer Wisconsin (Diagnostic) (Wolberg, Street
                                and Mangasarian 1995): features of cell nuclei images
``wine``           178 x 13     UCI Wine (Forina et al. 1988; Aeberhard, Coomans and de
                                Vel 1992): chemical analysis of three cultivars
``diabetes``       442 x 10     Efron, Hastie, Johnstone and Tibshirani (2004), "Least
                                angle regression", unscaled (``scaled=False``)
=================  ===========  =======================================================

For real data the reference mean and standard deviations are the empirical ones
(``ddof = 0``); the data do not depend on the seed (the runs differ by the estimators'
own generators).

Synthetic families, all with :math:`n = 10^4`, :math:`d = 256`, mean :math:`\mu_j = 10`
and marginal standard deviations :math:`\sigma_j = (d/j)^{3/4}` (PLAN's GaussianB at
:math:`\alpha = 1.5`, egmbook.gaussian_benchmarks): :math:`x_{ij} = \mu_j + \sigma_j
w_{ij}` with :math:`w` of mean 0 and variance 1 in every coordinate,

* ``t3``, ``t4``, ``t10``: Student :math:`t_\nu` scaled by :math:`\sqrt{(\nu-2)/\nu}`
  (symmetric heavy tails; independent coordinates);
* ``lognormal``: :math:`(e^{Z} - e^{1/2})/\sqrt{(e-1)e}` (skewness 6.18);
* ``gamma``: :math:`(G - k)/\sqrt k`, :math:`G\sim\Gamma(k = 1/2)` (skewness 2.83);
* ``ar1``: Gaussian with :math:`\mathrm{corr}(w_j, w_{j'}) = 0.8^{|j-j'|}`;
* ``equicorrelated``: Gaussian with :math:`\mathrm{corr}(w_j, w_{j'}) = 0.5`;
* ``mixture``: two Gaussian clusters, 10 % of the rows shifted by :math:`3\sigma`:
  :math:`w = 3(B - 0.1) + \sqrt{0.19}\,Z`, :math:`B\sim\mathrm{Bernoulli}(0.1)` per row;
* ``sigma_x0.5``, ``sigma_x2``: Gaussian data on the model, but the arms that are given
  :math:`\sigma` receive :math:`0.5\sigma` or :math:`2\sigma` (misestimated scales).

For synthetic data the reference mean and standard deviations are the population ones.

The box.  Every coordinate's public range is :math:`[-u, u]` with
:math:`u = 4\max_{ij}|x_{ij}| + 10` (the convention of the issue that motivated this
module, so that its numbers can be compared).  It depends on the data through
:math:`\max|x|`; it stands for a bound an analyst knows to within a factor of four,
and the estimators treat it as public.

The oracle arms' :math:`\sigma`.  ``sigma`` is what an arm "given :math:`\sigma`"
receives: the reference standard deviations floored at ``SIGMA_FLOOR_SHARE`` times
their mean (real data have zero-variance columns: three in ``digits``), times the
family's misestimation factor.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from egmlib import _validation as _v
from egmlib._validation import FloatArray

__all__ = [
    "BOX_FACTOR",
    "BOX_OFFSET",
    "DATASETS",
    "FAMILY_D",
    "FAMILY_MU",
    "FAMILY_N",
    "REAL",
    "SIGMA_FLOOR_SHARE",
    "SYNTHETIC",
    "OffModelSample",
    "OffModelSpec",
    "box",
    "family_sigmas",
    "load",
]

#: Rows, dimension and mean of the synthetic families (the issue's table).
FAMILY_N = 10_000
FAMILY_D = 256
FAMILY_MU = 10.0
#: Exponent of the marginal standard deviations sigma_j = (d/j)^FAMILY_EXPONENT.
FAMILY_EXPONENT = 0.75
#: The box is [-u, u] with u = BOX_FACTOR max|x| + BOX_OFFSET.
BOX_FACTOR = 4.0
BOX_OFFSET = 10.0
#: The sigma given to oracle arms is at least this share of the mean of the reference sd.
SIGMA_FLOOR_SHARE = 0.1


@dataclass(frozen=True)
class OffModelSample:
    """One dataset drawn (or loaded) by :meth:`OffModelSpec.sample`."""

    name: str
    X: np.ndarray  #: (n, d) read-only float64 data
    mean: FloatArray  #: (d,) reference mean, population (synthetic) or empirical (real)
    sd: FloatArray  #: (d,) reference standard deviations, same convention
    sigma: FloatArray  #: (d,) what an arm "given sigma" receives (floored, misestimated)
    lower: float  #: public box of every coordinate
    upper: float
    population: bool  #: True when ``mean`` and ``sd`` are the population's


@dataclass(frozen=True)
class OffModelSpec:
    """A dataset or synthetic family: name, kind, shape, description and its loader."""

    name: str
    kind: str  #: "real" or "synthetic"
    n: int
    d: int
    description: str  #: one line, with the source for real data
    _make: Callable[[np.random.Generator], tuple[np.ndarray, FloatArray, FloatArray, float]]

    def sample(self, seed: int | Sequence[int]) -> OffModelSample:
        """The data for ``seed`` (an int or a sequence of ints for ``numpy.random.default_rng``).

        Real data are the same for every seed.
        """
        rng = np.random.default_rng(_check_seed(seed))
        X, mean, sd, factor = self._make(rng)
        X = np.ascontiguousarray(X, dtype=float)
        X.setflags(write=False)
        lower, upper = box(X)
        floor = SIGMA_FLOOR_SHARE * float(np.mean(sd))
        sigma = factor * np.maximum(sd, floor)
        return OffModelSample(name=self.name, X=X, mean=np.asarray(mean, dtype=float),
                              sd=np.asarray(sd, dtype=float), sigma=sigma, lower=lower,
                              upper=upper, population=self.kind == "synthetic")


def _check_seed(seed: object) -> int | list[int]:
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError(f"seed must be an int >= 0 or a sequence of them, got seed={seed!r}")
    if isinstance(seed, numbers.Real):  # ints; integral floats such as 1e3 (others: ValueError)
        return _v.check_count("seed", seed, minimum=0)
    if isinstance(seed, Sequence) and not isinstance(seed, str) and len(seed) > 0:
        return [_v.check_count(f"seed[{i}]", s, minimum=0) for i, s in enumerate(seed)]
    raise TypeError(f"seed must be an int >= 0 or a non-empty sequence of them, got seed of type "
                    f"{type(seed).__name__}")


def box(X: np.ndarray) -> tuple[float, float]:
    """The public box (-u, u), u = BOX_FACTOR max|x| + BOX_OFFSET (module docstring).

    Examples
    --------
    >>> box(np.array([[1.0, -2.0]]))
    (-18.0, 18.0)
    """
    X = _v.check_finite_data("X", X)
    u = BOX_FACTOR * float(np.max(np.abs(X))) + BOX_OFFSET
    _v.check_finite_result(u, what="the box", inputs="X")
    return -u, u


def family_sigmas(d: int = FAMILY_D) -> FloatArray:
    """Marginal standard deviations sigma_j = (d/j)^0.75, j = 1..d, of the synthetic families.

    Examples
    --------
    >>> family_sigmas(16)[[0, -1]].tolist()
    [8.0, 1.0]
    """
    d = _v.check_count("d", d, maximum=10**7)
    return (d / np.arange(1, d + 1, dtype=float)) ** FAMILY_EXPONENT


# ---------------------------------------------------------------------------------------
# real data (scikit-learn's bundled files)
# ---------------------------------------------------------------------------------------
def _sklearn_datasets():
    try:
        from sklearn import datasets
    except ImportError as exc:  # pragma: no cover - the data extra is in the lock
        raise ImportError("the real datasets need scikit-learn: pip install -e '.[data]' "
                          "(it is in requirements.lock)") from exc
    return datasets


def _real(loader: str, **kwargs: object) -> Callable[[np.random.Generator], tuple]:
    def make(rng: np.random.Generator) -> tuple[np.ndarray, FloatArray, FloatArray, float]:
        X = np.asarray(getattr(_sklearn_datasets(), loader)(**kwargs).data, dtype=float)
        return X, X.mean(axis=0), X.std(axis=0), 1.0
    return make


# ---------------------------------------------------------------------------------------
# synthetic families: x = mu + sigma * w, w standardised
# ---------------------------------------------------------------------------------------
def _family(noise: Callable[[np.random.Generator, int, int], np.ndarray],
            factor: float = 1.0) -> Callable[[np.random.Generator], tuple]:
    def make(rng: np.random.Generator) -> tuple[np.ndarray, FloatArray, FloatArray, float]:
        sigma = family_sigmas(FAMILY_D)
        W = noise(rng, FAMILY_N, FAMILY_D)
        W *= sigma
        W += FAMILY_MU
        return W, np.full(FAMILY_D, FAMILY_MU), sigma, factor
    return make


def _student(nu: float) -> Callable[[np.random.Generator, int, int], np.ndarray]:
    def noise(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
        return rng.standard_t(nu, size=(n, d)) * math.sqrt((nu - 2.0) / nu)
    return noise


def _lognormal(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    e = math.e
    return (np.exp(rng.standard_normal((n, d))) - math.sqrt(e)) / math.sqrt((e - 1.0) * e)


_GAMMA_SHAPE = 0.5


def _gamma(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    k = _GAMMA_SHAPE
    return (rng.standard_gamma(k, size=(n, d)) - k) / math.sqrt(k)


_AR1 = 0.8


def _ar1(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    W = rng.standard_normal((n, d))
    a, s = _AR1, math.sqrt(1.0 - _AR1 * _AR1)
    for j in range(1, d):  # stationary: every marginal is N(0, 1)
        W[:, j] = a * W[:, j - 1] + s * W[:, j]
    return W


_EQUICORRELATION = 0.5


def _equicorrelated(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    c = _EQUICORRELATION
    W = rng.standard_normal((n, d)) * math.sqrt(1.0 - c)
    W += math.sqrt(c) * rng.standard_normal((n, 1))
    return W


_MIX_P, _MIX_SHIFT = 0.1, 3.0


def _mixture(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    p, a = _MIX_P, _MIX_SHIFT
    s = math.sqrt(1.0 - a * a * p * (1.0 - p))  # 0.19 ** 0.5: unit variance in total
    W = rng.standard_normal((n, d)) * s
    W += a * ((rng.random((n, 1)) < p) - p)
    return W


def _gaussian(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    return rng.standard_normal((n, d))


_SPECS = (
    OffModelSpec("digits", "real", 1797, 64,
                 "scikit-learn digits: UCI Optical Recognition of Handwritten Digits (Alpaydin and "
                 "Kaynak 1998), 8x8 pixel counts 0..16", _real("load_digits")),
    OffModelSpec("breast_cancer", "real", 569, 30,
                 "scikit-learn breast cancer: UCI Breast Cancer Wisconsin (Diagnostic) (Wolberg, "
                 "Street and Mangasarian 1995)", _real("load_breast_cancer")),
    OffModelSpec("wine", "real", 178, 13,
                 "scikit-learn wine: UCI Wine recognition (Forina et al. 1988)", _real("load_wine")),
    OffModelSpec("diabetes", "real", 442, 10,
                 "scikit-learn diabetes, unscaled (Efron, Hastie, Johnstone and Tibshirani 2004)",
                 _real("load_diabetes", scaled=False)),
    OffModelSpec("t3", "synthetic", FAMILY_N, FAMILY_D, "Student t, nu = 3, unit variance",
                 _family(_student(3.0))),
    OffModelSpec("t4", "synthetic", FAMILY_N, FAMILY_D, "Student t, nu = 4, unit variance",
                 _family(_student(4.0))),
    OffModelSpec("t10", "synthetic", FAMILY_N, FAMILY_D, "Student t, nu = 10, unit variance",
                 _family(_student(10.0))),
    OffModelSpec("lognormal", "synthetic", FAMILY_N, FAMILY_D,
                 "standardised log-normal (e^Z), skewness 6.18", _family(_lognormal)),
    OffModelSpec("gamma", "synthetic", FAMILY_N, FAMILY_D,
                 "standardised gamma, shape 1/2, skewness 2.83", _family(_gamma)),
    OffModelSpec("ar1", "synthetic", FAMILY_N, FAMILY_D,
                 "Gaussian, AR(1) correlation 0.8 between neighbouring coordinates", _family(_ar1)),
    OffModelSpec("equicorrelated", "synthetic", FAMILY_N, FAMILY_D,
                 "Gaussian, correlation 0.5 between every two coordinates", _family(_equicorrelated)),
    OffModelSpec("mixture", "synthetic", FAMILY_N, FAMILY_D,
                 "two Gaussian clusters: 10 % of the rows shifted by 3 sigma", _family(_mixture)),
    OffModelSpec("sigma_x0.5", "synthetic", FAMILY_N, FAMILY_D,
                 "Gaussian on the model; arms given sigma receive 0.5 sigma", _family(_gaussian, 0.5)),
    OffModelSpec("sigma_x2", "synthetic", FAMILY_N, FAMILY_D,
                 "Gaussian on the model; arms given sigma receive 2 sigma", _family(_gaussian, 2.0)),
)

#: Every dataset and family, by name, in the order of the tables.
DATASETS: Mapping[str, OffModelSpec] = MappingProxyType({s.name: s for s in _SPECS})
#: Names of the real datasets and of the synthetic families.
REAL = tuple(s.name for s in _SPECS if s.kind == "real")
SYNTHETIC = tuple(s.name for s in _SPECS if s.kind == "synthetic")


def load(name: str, *, seed: int | Sequence[int] = 0) -> OffModelSample:
    """The dataset ``name`` of :data:`DATASETS` drawn from ``seed`` (real data: seed ignored).

    Examples
    --------
    >>> s = load("wine")
    >>> s.X.shape, s.population, bool(np.allclose(s.mean, s.X.mean(axis=0)))
    ((178, 13), False, True)
    """
    name = _v.check_choice("name", name, DATASETS)
    return DATASETS[name].sample(seed)

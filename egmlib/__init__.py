"""egmlib: the numerical core of the book *Differentially private vector sums for
Gaussian data*.

Each module implements one concern of the report (Poulsen, 2023); import them
directly, e.g. ``from egmlib import gchisq, calibration``.  The book's back matter holds
the API reference generated from the docstrings.  egmlib is the reusable library; the
book's own code (the Figure 2 experiments, chapter 7's and the sweeps' pipelines, how the
book states a checked claim) lives in the separate package :mod:`egmbook`, which imports
egmlib and never the reverse.

- :mod:`egmlib.calibration`                 noise calibration of the Gaussian mechanism (Theorems 1-2)
- :mod:`egmlib.mechanisms`                  Algorithms 1-3 and Algorithm 3's baseline (the clipped Gaussian mechanism)
- :mod:`egmlib.clipping`                    the one clipped sum of every release, and its sensitivity in floating point
- :mod:`egmlib.scaling`                     optimal scalings and expected errors in closed form (Theorem 3, Lemma 4.1)
- :mod:`egmlib.gchisq`                      tails and quantiles of weighted chi-square sums (the radius C)
- :mod:`egmlib.bounds`                      Lemma 4.2 and Theorem 4; the Laurent-Massart bound for every n
- :mod:`egmlib.symbolic`                    sympy constructions for Lemma 4.1, Theorem 3 and Appendix A
- :mod:`egmlib.composition`                 exact privacy profiles of non-Gaussian compositions (Lemma 2.2)
- :mod:`egmlib.validation`                  the argument checks of every public function
- :mod:`egmlib.peers`                       Algorithm 3 among its peers (chapter 8): private mean
  estimators under rho-zCDP, one module each

  - :mod:`egmlib.peers.plan`                PLAN (Aumuller, Lebeda, Nelson and Pagh 2024), without scaling, oracle
  - :mod:`egmlib.peers.iome`                IOME (Huang, Liang and Yi 2021), as in PLAN's experiments
  - :mod:`egmlib.peers.coinpress`           CoinPress (Biswas, Dong, Kamath and Ullman 2020)
  - :mod:`egmlib.peers.algorithm3`          Algorithm 3 with rho-zCDP noise, alone and end to end
  - :mod:`egmlib.peers.algorithm3_robust`   ESM, the book's private mean: four releases chosen by predicted error
  - :mod:`egmlib.peers.path_errors`         the predicted error of each of ESM's releases
  - :mod:`egmlib.peers.normalise`           the public map of the box onto the unit box (Proposition F.1)
  - :mod:`egmlib.peers.arms`                the registry of arms: name -> estimator and its inputs
  - :mod:`egmlib.peers.quantiles`           private quantiles: exponential mechanism, noisy bisection
  - :mod:`egmlib.peers.scales`              private standard deviations from pairwise differences
  - :mod:`egmlib.peers.hadamard`            the randomised Hadamard rotation of IOME
  - :mod:`egmlib.peers.budget`              zCDP budget splits and (epsilon, delta) conversions

Argument checks are shared and public (:mod:`egmlib.validation`): a wrong type raises TypeError, a
wrong value or an overflowing result ValueError, and the message names the argument.
"""

__all__ = ["__version__"]  # the modules are imported by name: from egmlib import gchisq

__version__ = "0.1.0"

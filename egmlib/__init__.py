"""egmlib: the numerical core of the book *Differentially private vector sums for
Gaussian data*.

Each module implements one concern of the report (Poulsen, 2023); import them
directly, e.g. ``from egmlib import gchisq, calibration``.

- :mod:`egmlib.calibration`  noise calibration of the Gaussian mechanism (Theorems 1-2)
- :mod:`egmlib.mechanisms`   Algorithms 1-3 and the baseline of Algorithm 3 (clipped Gaussian mechanism)
- :mod:`egmlib.scaling`      optimal scalings and expected errors (Theorem 3, Lemma 4.1)
- :mod:`egmlib.gchisq`       tails and quantiles of weighted chi-square sums (the radius C)
- :mod:`egmlib.bounds`       Lemma 4.2 and Theorem 4
- :mod:`egmlib.experiments`  Zipf standard deviations and the Figure 2 grid
- :mod:`egmlib.symbolic`     sympy constructions for Lemma 4.1, Theorem 3 and Appendix A
- :mod:`egmlib.clipping_error` noise, clipping and centre terms of a clipped noisy sum; best p_C
- :mod:`egmlib.privacy_audit`  empirical privacy check of Algorithm 3 on a worst-case pair
"""

__version__ = "0.1.0"

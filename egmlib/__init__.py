"""egmlib: the numerical core of the book *Differentially private vector sums for
Gaussian data*.

Each module implements one concern of the report (Poulsen, 2023); import them
directly, e.g. ``from egmlib import gchisq, calibration``.  The book's back matter holds
the API reference generated from the docstrings.

- :mod:`egmlib.calibration`      noise calibration of the Gaussian mechanism (Theorems 1-2)
- :mod:`egmlib.mechanisms`       Algorithms 1-3 and the baseline of Algorithm 3 (clipped Gaussian mechanism)
- :mod:`egmlib.scaling`          optimal scalings and expected errors in closed form (Theorem 3, Lemma 4.1)
- :mod:`egmlib.gchisq`           tails and quantiles of weighted chi-square sums (the radius C)
- :mod:`egmlib.experiments`      Section 5: Zipf standard deviations, the radii C_n and C_t, Figure 2
- :mod:`egmlib.bounds`           Lemma 4.2 and Theorem 4
- :mod:`egmlib.symbolic`         sympy constructions for Lemma 4.1, Theorem 3 and Appendix A
- :mod:`egmlib.clipping_error`   noise, clipping and centre terms of a clipped noisy sum; best p_C
- :mod:`egmlib.error_simulation` the same error measured by running the mechanisms on simulated data
- :mod:`egmlib.privacy_audit`    empirical privacy check of Algorithm 3 on a worst-case pair
- :mod:`egmlib.beyond_report`    typed access to the results of chapter 7's simulations

Argument checks are shared (``egmlib._validation``): a wrong type raises TypeError, a
wrong value or an overflowing result ValueError, and the message names the argument.
"""

__version__ = "0.1.0"

"""egmbook: the book's own code, built on the library :mod:`egmlib`.

Everything here exists to write the book *Differentially private vector sums for Gaussian
data*: it reproduces the report's experiments, runs the book's simulations and sweeps,
reads their saved results from the repository, and renders checked claims, tables and
figures.  It imports :mod:`egmlib`; egmlib never imports it (``tests/test_layering.py``).
Another project that wants the mechanisms, the calibration or the generalized chi-square
engine depends on :mod:`egmlib` alone.

- :mod:`egmbook.experiments`                 Section 5: Zipf standard deviations, the radii C_n and C_t, Figure 2
- :mod:`egmbook.report_quantile_procedure`   the report's own bisection for Figure 2's radii (Section 5)
- :mod:`egmbook.improvement_margin`          how far Figure 2's improvement R stays above 1
- :mod:`egmbook.clipping_error`              noise, clipping and centre terms of a clipped noisy sum; best p_C
- :mod:`egmbook.error_simulation`            the same error measured by running the mechanisms on simulated data
- :mod:`egmbook.neighbours`                  the neighbouring datasets the privacy checks attack
- :mod:`egmbook.privacy_check`               chapter 7a's white-box check of Algorithm 3 on a worst-case pair
- :mod:`egmbook.privacy_audit`               the black-box audit: attacks on released outputs, with controls
- :mod:`egmbook.book_audit`                  chapter 7b's run of the audit, its setting and stored results
- :mod:`egmbook.beyond_report`               typed access to the results of chapter 7's simulations
- :mod:`egmbook.gaussian_benchmarks`         PLAN's Gaussian benchmarks GaussianA, B and C
- :mod:`egmbook.peer_results`                typed access to the peers benchmarks' results files
- :mod:`egmbook.arm_styles`                  how the book shows the arms of chapters 8 and 9: labels, colours
- :mod:`egmbook.sweep`                       the sweeps' engine: seeding per task, local or dask workers, resumable log
- :mod:`egmbook.findings`                    the chapters' findings: typed records with their glue values
- :mod:`egmbook.claims`                      how the book states a checked claim, and the table of checks
- :mod:`egmbook.display`                     the book's figure style and tables
- :mod:`egmbook.cli`                         the command lines of benchmarks/ and scripts/, defaults shown
"""

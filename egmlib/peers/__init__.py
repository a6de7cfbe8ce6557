"""Algorithm 3 among its peers: private mean estimators under rho-zCDP.

Written from the papers, vectorised with numpy, each with its privacy accounting in
rho-zCDP (zero-concentrated differential privacy, Bun and Steinke 2016) under
substitution neighbours (the report's Definition 2.1).  Import the modules directly:

- :mod:`egmlib.peers.plan`       PLAN (Aumuller, Lebeda, Nelson and Pagh, PETS 2024), without
  scaling, and its last step with oracle inputs
- :mod:`egmlib.peers.iome`       IOME (Huang, Liang and Yi, NeurIPS 2021), as in PLAN's experiments
- :mod:`egmlib.peers.coinpress`  CoinPress (Biswas, Dong, Kamath and Ullman, NeurIPS 2020),
  with the paper's clipping radius or its authors' code's
- :mod:`egmlib.peers.algorithm3` the report's Algorithm 3 with rho-zCDP noise, and end to end
  with a private centre and private scales
- :mod:`egmlib.peers.algorithm3_robust` ESM, the book's recommended private mean: IOME alone,
  IOME around a coarse centre, Algorithm 3 with private scales, centre and radius, or PLAN's last
  step, whichever has the smallest error predicted from public and released values; and PLAN's
  last step on ESM's inputs
- :mod:`egmlib.peers.path_errors` the predicted errors of ESM's releases
- :mod:`egmlib.peers.normalise`  the public map of the box onto the unit box (no intermediate
  then depends on the box's magnitude)
- :mod:`egmlib.peers.arms`       the registry ``ARMS``: name -> estimator and the inputs it is
  given, used by the sweeps, the timing benchmark and the chapters
- :mod:`egmlib.peers.quantiles`  private quantiles: exponential mechanism, noisy binary search
- :mod:`egmlib.peers.scales`     private standard deviations from pairwise differences
- :mod:`egmlib.peers.hadamard`   the randomised Hadamard rotation
- :mod:`egmlib.peers.budget`     zCDP budget splits and (epsilon, delta) conversions

(The data the book compares these estimators on, PLAN's Gaussian benchmarks GaussianA/B/C
and the off-model datasets, are the book's code, not the library's:
``egmbook.gaussian_benchmarks`` and ``egmbook.offmodel_data``.)

Every estimator takes a :class:`numpy.random.Generator` and returns a frozen result
whose ``estimate`` is the private mean and whose ``budget`` lists the rho of each step.
An estimator with a public box ``[lower, upper]`` first moves entries outside it onto it
(:func:`egmlib.clipping.clamp_to_box`, a map of each row on its own), and every clipped sum
is :func:`egmlib.clipping.clipped_sum` with its noise calibrated to
:func:`egmlib.clipping.sum_sensitivity` (the sensitivity plus the bound on the rounding).
"""

__all__: list[str] = []  # a namespace: import the modules above

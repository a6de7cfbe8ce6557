"""Symbolic (sympy) verification of the optimisation results of the report.

The report (Poulsen, 2023) derives its scalings with Lagrange multipliers and checks the
second-order condition with a bordered Hessian. This module rebuilds those objects in
sympy so that every step can be re-derived, not just re-substituted:

* **Lemma 4.1** (eqs. (9)-(16)): minimise ``s^2 sum_j b_j^-2`` subject to
  ``sum_j (sigma_j b_j)^2 = 1``, where ``s = sigma_{eps,delta} = 2 C sigma_opt``.
  Stationary point ``b_j = 1 / sqrt(sigma_j sum_i sigma_i)`` (eq. (16)),
  ``lambda = s^2 (sum_i sigma_i)^2`` (eq. (15)).
* **Theorem 3** (the Elliptical Gaussian Mechanism of Pagh and Lebeda): minimise
  ``sigma_opt^2 sum_j Delta_j^2 / b_j^2`` subject to ``sum_j b_j^2 = 1``.
  Stationary point ``b_j = sqrt(Delta_j / sum_i Delta_i)``, minimum
  ``sigma_opt^2 ||Delta||_1^2`` (eq. (6)).
* **Appendix A**: the bordered Hessian, its leading principal minors at the stationary
  point, and the closed form of the determinant of an "arrowhead" matrix
  ``[[0, c^T], [c, diag(a)]]``, namely ``-sum_k c_k^2 prod_{l != k} a_l``.
  The sign test is the bordered-determinant criterion that the report cites as
  Theorem 7.12 of Magnus and Neudecker (2019): with one equality constraint, a
  stationary point of the Lagrangian is a strict local constrained minimum if the
  leading principal minors of the bordered Hessian of orders ``3, ..., d + 1`` are
  all negative (the report also lists order 2, which is ``-c_1^2 < 0`` always).
* **Global optimality**: in the variables ``u_j = b_j^2`` both problems minimise a
  strictly convex function over an affine constraint, so the stationary point is the
  unique global minimum; :func:`squared_variable_form` and
  :func:`cauchy_schwarz_certificate` give two sympy-checkable certificates.
* **Lemma 4.2** (proof): exact moments of a chi-square variable with one degree of
  freedom, ``E[Z^k] = (2k - 1)!!`` and the absolute central moments ``E|Z - 1|^k``.

Symbols are declared positive (``sigma_j, Delta_j, b_j, s, sigma_opt > 0``), as in the
report, which fixes ``b_j >= 0`` "to make calculations easier"; the multiplier is then
shown to be positive at every stationary point (:func:`multiplier_at_stationarity`).

sympy is an optional dependency of egmlib: ``pip install 'egmlib[symbolic]'`` (without it,
importing this module raises an ImportError that says so).

Indexing follows Appendix A: the bordered Hessian is ordered ``(lambda, b_1, ..., b_d)``
and ``H_r`` is its leading ``r x r`` block, ``r = 2, ..., d + 1`` (``H_r`` involves the
first ``r - 1`` scalings).

The package is split along those subjects, one private module each: the problems and their
stationary point for a concrete ``d``, the stationary point for a symbolic ``d``, the
bordered Hessian and the arrowhead determinant, global optimality, the moments of Lemma
4.2, Appendix A for a symbolic dimension, and the steps beyond the report; everything is
imported from ``egmlib.symbolic``.
"""

from __future__ import annotations

try:
    import sympy  # noqa: F401
except ImportError as exc:  # sympy is an optional dependency of egmlib
    raise ImportError(
        "egmlib.symbolic needs sympy, an optional dependency of egmlib: install it with the "
        "'symbolic' extra, pip install 'egmlib[symbolic]'") from exc

from ._appendix_a import (
    ArrowheadRecurrenceProof,
    GeneralBorderedHessian,
    GeneralMinors,
    _block_identity,  # noqa: F401 - the tests' negative control of the block identities
    general_bordered_hessian,
    general_minors,
    prove_arrowhead_recurrence,
)
from ._beyond_report import LaurentMassartSteps, PrintedSteps, laurent_massart_steps, report_printed_steps
from ._general_d import GeneralSolution, general_stationary_point
from ._global_optimality import (
    CauchySchwarzCertificate,
    SquaredVariableForm,
    cauchy_schwarz_certificate,
    squared_variable_form,
)
from ._hessian import (
    AppendixAMatrix,
    ArrowheadProof,
    MinorClosedForm,
    arrowhead_det_closed_form,
    arrowhead_matrix,
    bordered_hessian,
    general_minor_closed_form,
    leading_principal_minors,
    lemma41_minor_closed_form,
    prove_arrowhead_determinant,
    report_appendix_a_matrix,
    theorem3_minor_closed_form,
)
from ._moments import chi2_abs_central_moment, chi2_moment
from ._problems import (
    LagrangeProblem,
    StationaryPoint,
    expected_stationary_point,
    lemma41_problem,
    multiplier_at_stationarity,
    solve_stationary_point,
    stationarity_system,
    theorem3_problem,
)

__all__ = [
    "LagrangeProblem",
    "StationaryPoint",
    "GeneralSolution",
    "ArrowheadProof",
    "MinorClosedForm",
    "AppendixAMatrix",
    "SquaredVariableForm",
    "CauchySchwarzCertificate",
    "lemma41_problem",
    "theorem3_problem",
    "stationarity_system",
    "multiplier_at_stationarity",
    "solve_stationary_point",
    "expected_stationary_point",
    "general_stationary_point",
    "bordered_hessian",
    "leading_principal_minors",
    "arrowhead_matrix",
    "arrowhead_det_closed_form",
    "prove_arrowhead_determinant",
    "lemma41_minor_closed_form",
    "theorem3_minor_closed_form",
    "general_minor_closed_form",
    "report_appendix_a_matrix",
    "squared_variable_form",
    "cauchy_schwarz_certificate",
    "chi2_moment",
    "chi2_abs_central_moment",
    "GeneralBorderedHessian",
    "ArrowheadRecurrenceProof",
    "GeneralMinors",
    "LaurentMassartSteps",
    "PrintedSteps",
    "general_bordered_hessian",
    "prove_arrowhead_recurrence",
    "general_minors",
    "laurent_massart_steps",
    "report_printed_steps",
]

# defined in the private modules; documented, pickled and shown as egmlib.symbolic's
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name

"""Tests for egmlib.symbolic: Lemma 4.1, Theorem 3 and Appendix A in sympy.

Every symbolic result is also checked against an independent route: a direct
``sympy.solve`` of the whole system, numbers (numpy) at random positive sigmas,
brute-force determinants, or mpmath quadrature.
"""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from egmlib import symbolic as S

PROBLEMS = [S.lemma41_problem, S.theorem3_problem]


def _eq(x, y):
    return sp.factor(x) == sp.factor(y) or sp.simplify(x - y) == 0


# ---------------------------------------------------------------- problem construction


def test_lemma41_lagrangian_matches_eqs_9_and_10():
    P = S.lemma41_problem(3)
    s, lam = P.scale, P.multiplier
    expected = s**2 * sum(b**-2 for b in P.b) + lam * (
        sum((x * b) ** 2 for x, b in zip(P.params, P.b, strict=True)) - 1
    )
    assert sp.expand(P.lagrangian - expected) == 0
    assert P.d == 3


def test_stationarity_equation_eq_11():
    P = S.lemma41_problem(2)
    eqs = S.stationarity_system(P)
    b1, sig1 = P.b[0], P.params[0]
    assert _eq(eqs[0], -2 * P.scale**2 * b1**-3 + 2 * P.multiplier * sig1**2 * b1)
    assert _eq(eqs[-1], P.constraint)
    assert len(eqs) == 3


@pytest.mark.parametrize("d,exc", [(0, ValueError), (-1, ValueError), (2.5, ValueError),
                                   (True, TypeError), ("3", TypeError)])
def test_bad_dimension_rejected(d, exc):
    with pytest.raises(exc, match="d must be"):
        S.lemma41_problem(d)
    with pytest.raises(exc, match="d must be"):
        S.theorem3_problem(d)


# ---------------------------------------------------------------- stationary points


@pytest.mark.parametrize("make", PROBLEMS, ids=["lemma4.1", "theorem3"])
@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_solved_point_equals_report_closed_form(make, d):
    P = make(d)
    got = S.solve_stationary_point(P)
    want = S.expected_stationary_point(P)
    assert all(_eq(x, y) for x, y in zip(got.b, want.b, strict=True))
    assert _eq(got.multiplier, want.multiplier)
    assert _eq(got.value, want.value)
    assert got.residuals == (0,) * (d + 1)


def test_lemma41_intermediate_steps_eqs_12_and_14():
    P = S.lemma41_problem(2)
    pt = S.solve_stationary_point(P)
    s, lam = P.scale, P.multiplier
    # eq. (12): b_j = sqrt(s) / (lambda^(1/4) sqrt(sigma_j))
    for bj_lam, x in zip(pt.steps["b_of_lambda"], P.params, strict=True):
        assert _eq(bj_lam, sp.sqrt(s) / (lam ** sp.Rational(1, 4) * sp.sqrt(x)))
    # eq. (14): s (sigma_1 + sigma_2) / sqrt(lambda) - 1
    assert _eq(pt.steps["constraint_in_lambda"], s * sum(P.params) / sp.sqrt(lam) - 1)


def test_direct_solve_in_squared_variables_has_one_admissible_solution():
    """Independent route: solve the whole system in u_j = b_j^2 without positivity."""
    P = S.lemma41_problem(2)
    sq = S.squared_variable_form(P)
    mu = sp.Symbol("mu", real=True)
    L = sq.objective + mu * sq.constraint
    u_free = sp.symbols("v1 v2", real=True)
    L = L.subs(dict(zip(sq.u, u_free, strict=True)))
    sols = sp.solve([sp.diff(L, v) for v in (*u_free, mu)], [*u_free, mu], dict=True)
    assert len(sols) >= 2  # the sign-mixed solutions exist without positivity...
    admissible = [sol for sol in sols if all(sol[v].is_positive for v in u_free)]
    rejected = [sol for sol in sols if sol not in admissible]
    # the others have u_1 u_2 < 0 (one b_j would be imaginary), e.g. at these sigmas
    for vals in ({P.params[0]: 2, P.params[1]: 3}, {P.params[0]: 5, P.params[1]: 1.5}):
        for sol in rejected:
            assert (sol[u_free[0]] * sol[u_free[1]]).subs(vals) < 0
    assert len(admissible) == 1
    want = S.expected_stationary_point(P)
    for v, bj in zip(u_free, want.b, strict=True):
        assert _eq(admissible[0][v], bj**2)


def test_multiplier_is_positive_at_every_stationary_point():
    for make in PROBLEMS:
        lams = S.multiplier_at_stationarity(make(3))
        assert len(lams) == 3
        assert all(x.is_positive for x in lams)
    P = S.lemma41_problem(1)
    (lam1,) = S.multiplier_at_stationarity(P)
    assert _eq(lam1, P.scale**2 / (P.params[0] ** 2 * P.b[0] ** 4))


@pytest.mark.parametrize("kind", ["lemma4.1", "theorem3"])
def test_general_d_solution(kind):
    g = S.general_stationary_point(kind=kind)
    i = sp.Symbol("i", integer=True, positive=True)
    total = sp.Sum(g.params[i], (i, 1, g.d))
    if kind == "lemma4.1":
        want_b = 1 / sp.sqrt(g.params[g.j] * total)
    else:
        want_b = sp.sqrt(g.params[g.j] / total)
    assert _eq(g.b - want_b, 0)
    assert _eq(g.multiplier - g.scale**2 * total**2, 0)
    assert _eq(g.value - g.scale**2 * total**2, 0)
    assert g.residual_b == 0 and g.residual_constraint == 0
    assert not g.stationarity.has(sp.Piecewise)


def test_general_d_rejects_unknown_kind():
    with pytest.raises(ValueError, match="kind must be"):
        S.general_stationary_point(kind="lemma4.2")
    with pytest.raises(TypeError, match="kind must be"):
        S.general_stationary_point(kind=None)


@settings(max_examples=40)
@given(
    sig=st.lists(st.floats(0.01, 100.0), min_size=1, max_size=8),
    seed=st.integers(0, 2**32 - 1),
)
def test_numeric_global_minimum_lemma41(sig, seed):
    """Random feasible b never beat eq. (16) (numbers, not sympy)."""
    sig = np.asarray(sig)
    S_ = sig.sum()
    b_star = 1.0 / np.sqrt(sig * S_)
    assert math.isclose(np.sum((sig * b_star) ** 2), 1.0, rel_tol=1e-12)
    best = np.sum(b_star**-2)
    assert math.isclose(best, S_**2, rel_tol=1e-12)
    rng = np.random.default_rng(seed)
    b = rng.uniform(0.05, 5.0, size=(200, sig.size))
    b /= np.sqrt(np.sum((sig * b) ** 2, axis=1, keepdims=True))  # onto eq. (10)
    assert np.all(np.sum(b**-2, axis=1) >= best * (1 - 1e-12))


# ---------------------------------------------------------------- bordered Hessian


def test_bordered_hessian_entries_before_substitution():
    P = S.lemma41_problem(3)
    H = S.bordered_hessian(P)
    s, lam = P.scale, P.multiplier
    assert H[0, 0] == 0
    for j, (bj, x) in enumerate(zip(P.b, P.params, strict=True), start=1):
        assert _eq(H[0, j], 2 * x**2 * bj)
        assert _eq(H[j, j], 6 * s**2 / bj**4 + 2 * lam * x**2)
        for k in range(1, 4):
            if k != j:
                assert H[j, k] == 0


def test_bordered_hessian_at_solution_corrects_appendix_a():
    """Border 2 sigma_j^(3/2)/sqrt(S), diagonal 8 s^2 S^2 sigma_j^2 (not the report's)."""
    d = 3
    P = S.lemma41_problem(d)
    H = S.bordered_hessian(P, point=S.solve_stationary_point(P))
    sig, s = P.params, P.scale
    tot = sum(sig)
    _, _, R = S.report_appendix_a_matrix(d, as_printed=False)
    for j in range(1, d + 1):
        x = sig[j - 1]
        assert _eq(H[0, j], 2 * x ** sp.Rational(3, 2) / sp.sqrt(tot))
        assert _eq(H[j, j], 8 * s**2 * tot**2 * x**2)
        # the report's printed entries are different functions of sigma
        assert not _eq(R[0, j], H[0, j])
        assert not _eq(R[j, j], H[j, j])


def test_report_matrix_as_printed_is_not_symmetric():
    _, _, R = S.report_appendix_a_matrix(3)
    assert R != R.T
    _, _, R2 = S.report_appendix_a_matrix(3, as_printed=False)
    assert R2 == R2.T


@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_minors_at_solution_match_closed_form_and_are_negative(d):
    P = S.lemma41_problem(d)
    H = S.bordered_hessian(P, point=S.expected_stationary_point(P))
    minors = S.leading_principal_minors(H)
    assert sorted(minors) == list(range(2, d + 2))
    for r, det in minors.items():
        cf = S.lemma41_minor_closed_form(r, sigma=P.params, s=P.scale)
        assert _eq(det, cf)
        assert cf.is_negative


@pytest.mark.parametrize("d", [2, 3, 4])
def test_theorem3_minors(d):
    P = S.theorem3_problem(d)
    H = S.bordered_hessian(P, point=S.solve_stationary_point(P))
    for r, det in S.leading_principal_minors(H).items():
        cf = S.theorem3_minor_closed_form(r, Delta=P.params, sigma_opt=P.scale)
        assert _eq(det, cf)
        assert cf.is_negative


def test_report_matrix_minors_also_negative():
    """The induction only uses positivity of the entries, so the sign pattern survives."""
    sig, s, R = S.report_appendix_a_matrix(3, as_printed=False)
    for r, det in S.leading_principal_minors(R).items():
        a = [R[k, k] for k in range(1, r)]
        c = [R[0, k] for k in range(1, r)]
        assert _eq(det, S.arrowhead_det_closed_form(a, c=c))
        assert det.is_negative


def test_minor_orders_validated():
    H = S.arrowhead_matrix([1, 2], c=[3, 4])
    with pytest.raises(ValueError, match="orders entry must be <= 3"):
        S.leading_principal_minors(H, orders=[4])
    with pytest.raises(ValueError, match="r must be"):
        S.lemma41_minor_closed_form(1, sigma=sp.symbols("x1 x2"), s=1)
    with pytest.raises(ValueError, match="r must be <= d"):
        S.theorem3_minor_closed_form(4, Delta=sp.symbols("x1 x2"), sigma_opt=1)


# ---------------------------------------------------------------- arrowhead determinant


def test_arrowhead_proof_all_steps_verified():
    proof = S.prove_arrowhead_determinant(max_explicit=5)
    assert proof.base_case and proof.inductive_step and proof.cofactor_sign
    assert proof.expansion_sizes == (2, 3, 4, 5)
    assert proof.verified
    assert "m = 2..5" in proof.statement


@given(
    st.lists(
        st.tuples(
            st.integers(-9, 9).filter(lambda v: v != 0),
            st.fractions(min_value=-5, max_value=5, max_denominator=7),
        ),
        min_size=1,
        max_size=7,
    )
)
def test_arrowhead_closed_form_equals_exact_determinant(pairs):
    a = [sp.Integer(x) for x, _ in pairs]
    c = [sp.Rational(y.numerator, y.denominator) for _, y in pairs]
    M = S.arrowhead_matrix(a, c=c)
    assert M.det(method="bareiss") == S.arrowhead_det_closed_form(a, c=c)


def test_arrowhead_length_mismatch():
    with pytest.raises(ValueError, match="equal length"):
        S.arrowhead_matrix([1, 2], c=[1])
    with pytest.raises(ValueError, match="equal length"):
        S.arrowhead_det_closed_form([], c=[])
    with pytest.raises(TypeError, match="a must be a sequence"):
        S.arrowhead_matrix(None, c=[1])
    with pytest.raises(TypeError, match="problem must be a LagrangeProblem"):
        S.solve_stationary_point(None)
    with pytest.raises(TypeError, match="H must be a sympy Matrix"):
        S.leading_principal_minors([[0, 1], [1, 0]])


@pytest.mark.parametrize("kind", ["lemma4.1", "theorem3"])
def test_general_minor_closed_form(kind):
    m, from_arrowhead, expected, equal = S.general_minor_closed_form(kind=kind)
    assert equal
    # spot-check the symbolic-m formula at m = 3 against the concrete closed form
    x = sp.symbols("x1:4", positive=True)
    name, tot_name = ("sigma", "S") if kind == "lemma4.1" else ("Delta", "T")
    base = sp.IndexedBase(name, positive=True)
    tot = sp.Symbol(tot_name, positive=True)
    concrete = expected.subs(m, 3).doit().xreplace({base[i + 1]: x[i] for i in range(3)})
    concrete = concrete.subs(tot, sum(x))
    if kind == "lemma4.1":
        want = S.lemma41_minor_closed_form(4, sigma=x, s=sp.Symbol("s", positive=True))
    else:
        want = S.theorem3_minor_closed_form(4, Delta=x, sigma_opt=sp.Symbol("sigma_opt", positive=True))
    assert _eq(concrete, want)
    # and the closed form is not vacuous: it differs at m = 3 from the m = 2 value
    wrong = expected.subs(m, 2).doit().xreplace({base[i + 1]: x[i] for i in range(3)}).subs(tot, sum(x))
    assert not _eq(concrete, wrong)


# ---------------------------------------------------------------- global optimality


@pytest.mark.parametrize("make", PROBLEMS, ids=["lemma4.1", "theorem3"])
def test_convex_in_squared_variables(make):
    sq = S.squared_variable_form(make(3))
    assert sq.convex
    assert sq.hessian.is_diagonal()
    assert all(sp.diff(sq.constraint, u, 2) == 0 for u in sq.u)


@pytest.mark.parametrize("make", PROBLEMS, ids=["lemma4.1", "theorem3"])
@pytest.mark.parametrize("d", [2, 3, 4])
def test_cauchy_schwarz_certificate(make, d):
    P = make(d)
    gap, sos, ok = S.cauchy_schwarz_certificate(P)
    assert ok
    # the gap vanishes exactly at the stationary point
    pt = S.expected_stationary_point(P).as_dict(P)
    assert sp.simplify(sos.subs(pt)) == 0
    # and is positive at another feasible point (sigma_j = j for concreteness)
    vals = {p: j + 1 for j, p in enumerate(P.params)}
    bad = {b: 1 for b in P.b}
    assert sos.subs(vals).subs(bad) > 0


# ---------------------------------------------------------------- Lemma 4.2 moments


def test_chi2_moments_double_factorial():
    for k in range(0, 41):
        assert S.chi2_moment(k) == sp.factorial2(2 * k - 1)
    with pytest.raises(ValueError, match="k must be"):
        S.chi2_moment(-1)


def _expect_chi2(f):
    """E f(Z), Z = W^2 with W ~ N(0, 1): a smooth integral over w in (0, inf)."""
    return mpmath.quad(lambda w: 2 * f(w**2) * mpmath.npdf(w), [0, 1, mpmath.inf])


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 7])
def test_abs_central_moment_against_quadrature(k):
    with mpmath.workdps(40):
        quad = _expect_chi2(lambda z: abs(z - 1) ** k)
        exact = mpmath.mpf(str(sp.N(S.chi2_abs_central_moment(k), 40)))
        assert abs(exact - quad) < mpmath.mpf("1e-25") * quad


def test_abs_central_moment_bounded_by_raw_moment():
    """The first inequality of Lemma 4.2's proof: E|Y^k| <= E[X^(2k)], k = 1..40."""
    for k in range(1, 41):
        assert sp.N(S.chi2_abs_central_moment(k), 40) < S.chi2_moment(k)
    assert S.chi2_abs_central_moment(4) == 60  # fourth central moment of chi^2_1


# ---------------------------------------------------------------- exact inputs, fast routes


def test_numbers_enter_as_their_exact_value():
    """A float16 -2/3 is -1365/2048 (its exact binary value), not a 3-digit Float; Python
    floats, numpy integers and Fractions are exact too."""
    from fractions import Fraction

    x = np.float16(-2 / 3)
    det = S.arrowhead_det_closed_form([x], c=[1])
    assert det == -1 and S.arrowhead_matrix([x], c=[np.int8(3)])[1, 1] == sp.Rational(-1365, 2048)
    assert S.arrowhead_matrix([-2 / 3], c=[1])[1, 1] == sp.Rational(*(-2 / 3).as_integer_ratio())
    assert S.arrowhead_matrix([np.float32(0.1)], c=[Fraction(2, 3)])[0, 1] == sp.Rational(2, 3)
    assert S.arrowhead_matrix([np.float32(0.1)], c=[1])[1, 1] == sp.Rational(13421773, 134217728)
    assert not S.lemma41_minor_closed_form(2, sigma=[np.float16(0.5)], s=np.float16(-2 / 3)).has(sp.Float)
    with pytest.raises(ValueError, match="a\\[0\\] must be finite"):
        S.arrowhead_matrix([np.float16(np.inf)], c=[1])


@pytest.mark.parametrize("make", PROBLEMS, ids=["lemma4.1", "theorem3"])
def test_derivatives_are_sympys(make):
    """The one-walk derivatives give sympy's own expressions: diff, hessian, the multiplier
    solved coordinate by coordinate, and the Hessian at the point simplified entry by entry."""
    for d in (1, 3):
        P = make(d)
        variables = (*P.b, P.multiplier)
        assert S.stationarity_system(P) == tuple(sp.diff(P.lagrangian, v) for v in variables)
        assert S.bordered_hessian(P) == sp.hessian(P.lagrangian, (P.multiplier, *P.b))
    lam = sp.Symbol("lambda_real", real=True)
    one_by_one = tuple(sp.simplify(sp.solve(sp.diff(P.lagrangian, b).subs(P.multiplier, lam), lam)[0]) for b in P.b)
    assert S.multiplier_at_stationarity(P) == one_by_one
    P = make(2)
    pt = S.expected_stationary_point(P)
    assert S.bordered_hessian(P, point=pt) == sp.hessian(P.lagrangian, (P.multiplier, *P.b)).subs(
        pt.as_dict(P)).applyfunc(sp.simplify)


def test_arrowhead_minors_equal_berkowitz():
    """Minors of an arrowhead matrix come from the arrowhead determinant: equal to sympy's
    Berkowitz determinant on exact numbers (size 14) and on symbols; a matrix that is not
    an arrowhead, or has a zero on its diagonal, goes through Berkowitz."""
    rng = np.random.default_rng(36)
    a = [sp.Rational(int(v), 7) for v in rng.integers(1, 50, 13)]
    c = [sp.Integer(int(v)) for v in rng.integers(-9, 10, 13)]
    M = S.arrowhead_matrix(a, c=c)
    minors = S.leading_principal_minors(M)
    assert minors == {r: M[:r, :r].det(method="berkowitz") for r in range(2, 15)}
    x = sp.symbols("x1:21", positive=True)
    y = sp.symbols("y1:21", positive=True)
    big = S.leading_principal_minors(S.arrowhead_matrix(x, c=y), orders=[3, 20])
    assert sp.expand(big[3] - S.arrowhead_matrix(x[:2], c=y[:2]).det()) == 0
    assert big[20].is_negative  # 39 symbols: the factored-out form, still a proof of the sign
    assert sp.expand(big[20] - S.arrowhead_det_closed_form(x[:19], c=y[:19])) == 0
    zero = S.arrowhead_matrix([1, 0, 2], c=[1, 1, 1])
    assert S.leading_principal_minors(zero) == {r: sp.factor(zero[:r, :r].det()) for r in range(2, 5)}
    full = sp.Matrix([[0, 1, 2], [1, 3, 1], [2, 1, 4]])
    assert S.leading_principal_minors(full)[3] == full.det()


@pytest.mark.parametrize("make", PROBLEMS, ids=["lemma4.1", "theorem3"])
def test_cauchy_schwarz_certificate_agrees_with_sympy_expand(make):
    """The exact monomial-by-monomial check of Lagrange's identity agrees with sympy's own
    expansion of gap - sum_of_squares."""
    for d in (1, 2, 3, 4):
        gap, sos, ok = S.cauchy_schwarz_certificate(make(d))
        assert ok and sp.expand(gap - sos) == 0

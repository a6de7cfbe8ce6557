"""Appendix A for a symbolic dimension (egmlib.symbolic, appended functions)."""

import pytest
import sympy as sp

from egmlib import symbolic


@pytest.fixture(scope="module")
def minors():
    return symbolic.general_minors()


def test_entries_derived_for_symbolic_d(minors):
    H = symbolic.general_bordered_hessian()
    assert H.corner == 0 and H.matches_closed_form and H.positive
    assert H.block.has(sp.KroneckerDelta)                 # the b-block is diagonal
    assert sp.simplify(H.block.subs(H.k, H.j + 1)) == 0   # and zero off the diagonal


def test_recurrence_proof(minors):
    proof = minors.recurrence
    assert proof.verified and len(proof.axioms) == 5


def test_block_identity_detects_a_wrong_factor():
    m = sp.Symbol("m", integer=True, positive=True)
    A, u = sp.MatrixSymbol("A", m, m), sp.MatrixSymbol("u", m, 1)
    a = sp.Symbol("alpha", nonzero=True)
    I1, Im, Z = sp.Identity(1), sp.Identity(m), sp.ZeroMatrix(m, 1)
    M = sp.BlockMatrix([[A, u], [u.T, a * I1]])
    L = sp.BlockMatrix([[Im, u / a], [Z.T, I1]])
    B_wrong = sp.BlockMatrix([[A + u * u.T / a, Z], [Z.T, a * I1]])   # sign error
    U = sp.BlockMatrix([[Im, Z], [u.T / a, I1]])
    assert not symbolic._block_identity(L * B_wrong * U, M)


def test_minor_formula_against_explicit_matrix(minors):
    """Evaluate the symbolic-m minor at m = 2, d = 3 and compare with the 3 x 3 determinant."""
    assert minors.verified
    vals = {1: sp.Rational(1, 2), 2: sp.Rational(1, 3), 3: sp.Rational(1, 5)}
    sigma = sp.IndexedBase("sigma", positive=True)
    s = sp.Symbol("s", positive=True)
    d = sp.Symbol("d", integer=True, positive=True)
    expr = minors.minor.subs({minors.m: 2, d: 3}).doit()
    expr = expr.subs({sigma[k]: v for k, v in vals.items()}).subs(s, 2)
    P = symbolic.lemma41_problem(3)
    H = symbolic.bordered_hessian(P, point=symbolic.expected_stationary_point(P))
    det = H[:3, :3].det().subs({x: vals[i + 1] for i, x in enumerate(P.params)}).subs(P.scale, 2)
    assert sp.simplify(expr - det) == 0 and det < 0

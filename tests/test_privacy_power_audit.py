"""The audit of ESM with power (egmbook.power_audit, chapter 7b; issue 35, item 4).

* the claim's conversion of zCDP is valid (above the exact epsilon of a Gaussian mechanism) and
  tighter than Bun and Steinke's;
* the audited pair takes ESM's public stage (IOME, the same path on both datasets in every run), and
  reading IOME's intermediate releases leaves ESM's release unchanged bit for bit;
* the likelihood ratio of the final release has the law the attack assumes, for ESM itself and
  for the controls, on a fresh slice of runs; and on Algorithm 3's path, forced, too;
* an exception is an outcome: a mechanism that raises on one neighbour only is caught;
* the stored run (data/privacy_audit.json, "power") is found again on a recomputed slice, its
  bounds follow from its counts, ESM's claim stands and every control is caught, the one at twice
  the stated rho included.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from types import SimpleNamespace

import numpy as np
import pytest

from egmbook import power_audit as pw
from egmbook import privacy_audit as pa
from egmlib import calibration


@pytest.mark.parametrize("rho", [0.01, 0.5, 1.0, 3.2, 12.0])
@pytest.mark.parametrize("delta", [1e-6, 0.01, 0.05, 0.2])
def test_zcdp_conversion_is_valid_and_tighter(rho, delta):
    eps = pw.zcdp_epsilon(rho, delta=delta)
    gaussian = calibration.eps_from_sigma(1.0 / math.sqrt(2.0 * rho), delta=delta)  # the rho-zCDP Gaussian
    assert gaussian <= eps + 1e-9 and eps < calibration.rho_to_eps(rho, delta=delta)
    assert pw.zcdp_epsilon(1.1 * rho, delta=delta) > eps or eps == 0.0
    with pytest.raises(ValueError, match="rho must be finite"):
        pw.zcdp_epsilon(math.inf, delta=delta)


def test_the_control_at_twice_rho_doubles_the_budget():
    a = pw.final_noise_share(pw.PowerSetting())
    f = pw._twice_rho_factor(a)
    assert (1.0 - a) + a / f**2 == pytest.approx(2.0)
    twice = [c for c in pw.CONTROLS if c.name == pw.TWICE]
    assert len(twice) == 1 and twice[0].factor == f


def test_the_pair_differs_in_its_last_row_at_opposite_corners():
    st = pw.PowerSetting()
    X, Xp = pw.esm_pair(st)
    assert X.shape == (st.n, st.d) and np.array_equal(X[:-1], Xp[:-1])
    assert np.all(X[-1] == st.upper) and np.all(Xp[-1] == st.lower)


@functools.cache
def _slice(stop: int = 60) -> np.ndarray:
    return pw.power_releases(pw.PowerSetting(), start=0, stop=stop).values


def test_the_pair_takes_the_public_stage_and_the_capture_changes_nothing():
    from egmlib.peers import algorithm3_robust as ar
    from egmlib.peers.arms import ARMS

    st = pw.PowerSetting()
    assert not ar.scales_resolvable(st.n, d=st.d, rho=st.rho)
    assert ar.whole_box_tracks(st.n, d=st.d, rho=st.rho)  # IOME over the whole box, no coarse centre
    assert pw.final_noise_share(st) == ar.iome_shares(st.n, rho=st.rho)["noise"]
    for D in pw.esm_pair(st):
        for seed in range(5):
            plain = ARMS["Alg3"](D, rho=st.rho, lower=st.lower, upper=st.upper, rng=np.random.default_rng(seed))
            with pw._Capture() as cap:
                read = ARMS["Alg3"](D, rho=st.rho, lower=st.lower, upper=st.upper, rng=np.random.default_rng(seed))
            assert np.array_equal(plain.estimate, read.estimate) and plain.path == read.path == "iome"
            assert len(cap.calls) == 1 and cap.calls[0]["result"].C * (st.upper - st.lower) == read.C
    assert ar.iome_mean is not None and ar.iome_mean.__module__ == "egmlib.peers.iome"  # restored


def _law(Y: np.ndarray, mu: float) -> None:
    for m, ctl in enumerate(pw.CONTROLS):
        if ctl.kind not in ("esm", "noise"):
            continue
        mf = mu / ctl.factor
        for i, sign in ((0, 1.0), (1, -1.0)):
            L = Y[i, m, :, 0]
            assert abs(L.mean() - sign * mf**2 / 2) < 4 * mf / math.sqrt(L.size), (ctl.name, i, L.mean())
            assert 0.6 * mf < L.std() < 1.5 * mf, (ctl.name, i, L.std())
    assert not np.any(np.isin(Y[:, :, :, 0], [pw.EXCEPTION_VALUE, pw.FEW_ROWS_VALUE]))  # no exception, none unread


def test_likelihood_ratio_has_the_law_of_the_final_step():
    """L ~ N(+-mu^2/2, mu^2) with mu = sqrt(2 rho_noise) / f for noise f times ESM's (the pair attains
    the sensitivity 2C); 60 runs per dataset, means within 4 standard errors."""
    st = pw.PowerSetting()
    _law(_slice(), math.sqrt(2.0 * pw.final_noise_share(st) * st.rho))


def test_likelihood_ratio_reads_algorithm3s_path_too():
    """ESM forced onto Algorithm 3's path: the same law at that path's noise share (40 runs)."""
    from egmlib.peers.algorithm3_robust import SHARES, algorithm3_robust

    st = pw.PowerSetting()
    esm = functools.partial(algorithm3_robust, path="algorithm3")
    Y = pw.power_releases(st, start=0, stop=40, esm=esm).values
    _law(Y, math.sqrt(2.0 * float(SHARES["noise"]) * st.rho))


def test_an_exception_on_one_neighbour_is_caught():
    """A mechanism that raises on X' only: its exceptions are outcomes, and the attack separates them."""
    def esm(D, **kw):
        if D[-1, 0] < 0:
            raise ValueError("a leak")
        return SimpleNamespace(path="iome", estimate=np.zeros(D.shape[1]))

    st = dataclasses.replace(pw.PowerSetting(), rho=0.05, trials=200, n=20)
    rows = pw.audit_rows(pw.power_releases(st, start=0, stop=st.trials, esm=esm), st, noise_share=0.75)
    assert rows[0].exceptions == (0, 200) and rows[0].few_rows == (200, 0)
    assert all(rows[0].caught.values())


# --------------------------------------------------------------------------------------- #
# the stored run
# --------------------------------------------------------------------------------------- #
def test_stored_run_is_found_again_on_a_recomputed_slice():
    audit = pw.load_power_audit()
    assert audit.setting == pw.PowerSetting()  # the book's setting, not a slice
    Y = _slice(audit.setting.saved)
    for m, ctl in enumerate(pw.CONTROLS):
        for i, which in enumerate(("X", "X'")):
            assert np.allclose(Y[i, m, :, 0], audit.first[ctl.name][which], rtol=1e-12, atol=1e-12), (ctl.name, which)


def test_stored_run_refutes_every_control_and_not_esm():
    audit = pw.load_power_audit()
    st = audit.setting
    P = st.primary_delta
    assert [r.name for r in audit.rows] == [c.name for c in pw.CONTROLS]
    for r in audit.rows:
        for a in r.attacks:
            assert a.n_pos == a.n_neg == st.trials // 2
            assert pa.eps_lower_bound(a.tp, a.fp, n_pos=a.n_pos, n_neg=a.n_neg, delta=a.delta, alpha=st.alpha_each,
                                      both_directions=False) == a.eps_lb
            assert a.eps_lb <= r.eps_true[a.delta] + 1e-9  # no bound above the truth
    esm = audit.row("ESM")
    assert not any(esm.caught.values()) and esm.exceptions == (0, 0)
    assert esm.few_rows == (0, 0)  # every release read through its final step
    for name in ("half the final noise", "a quarter of the final noise", "no clipping", "no centre step", pw.TWICE):
        assert audit.row(name).caught[P], name

r"""The book's last pass over the report with three lenses: every cited result against its source,
everything the report describes twice, and every range of indices in its proofs (issue 33).

:data:`ROWS` holds one :class:`ReviewRow` per comparison, in the report's order within each lens,
with its rank on the errata page's rule (``changes a result``, ``changes a proof``, ``cosmetic``,
``remark``) or ``agrees``; a row that finds an error links the errata entry that ranks it, a row
that agrees links the book's check or statement.  The coverage page shows the rows as three
numbered tables (:func:`list_table`) and checks them against the errata page
(:func:`consistency`): every linked entry exists, and sits under the rank the row gives it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from egmbook.findings import Finding
from egmlib.validation import check_choice

__all__ = ["LENSES", "RANKS", "ReviewRow", "ROWS", "list_table", "Consistency", "consistency"]

Lens = Literal["sources", "twice", "indices"]
Rank = Literal["changes a result", "changes a proof", "cosmetic", "remark", "agrees"]

#: The lenses, in order, with the captions of their tables.
LENSES: Mapping[str, str] = MappingProxyType({
    "sources": "Lens 1: every result the report cites, against the hypotheses and constants of its source.",
    "twice": "Lens 2: everything the report describes twice, compared word for word.",
    "indices": "Lens 3: every range of indices in the proofs of Appendix A (and of Lemma 4.2 and Theorem 4).",
})
#: The ranks of the errata page's rule, then "agrees"; the errata page's heading of each rank.
RANKS: Mapping[Rank, str] = MappingProxyType({
    "changes a result": "Entries that change a result", "changes a proof": "Entries that change a proof",
    "cosmetic": "Cosmetic entries", "remark": "Remarks", "agrees": ""})


@dataclass(frozen=True)
class ReviewRow:
    """One comparison of the three-lens pass."""

    lens: Lens
    passage: str  #: the report's passage (MyST)
    compared_with: str  #: what it is compared with
    finding: str  #: what the comparison finds, at most 30 words
    rank: Rank  #: its rank on the errata page's rule, or "agrees"
    where: str  #: the errata entry (first) or the check that shows it, as MyST references


#: The comparisons of the three-lens pass, one :class:`ReviewRow` each, in the report's order within each lens
#: (shown on the coverage page's three tables).
#:
#: :meta hide-value:
ROWS: tuple[ReviewRow, ...] = (
    ReviewRow(
        lens='sources',
        passage='Definition 2.1 (neighbouring datasets), citing Dwork and Roth',
        compared_with='their definition',
        finding="theirs add or remove a record, the report's replace one",
        rank='cosmetic',
        where='{ref}`err-definition-2-1-citation`',
    ),
    ReviewRow(
        lens='sources',
        passage='Definition 2.2 (sensitivity), their Definition 3.8',
        compared_with='Dwork and Roth',
        finding="the same $\\ell_2$ sensitivity, under the report's own neighbouring relation; the $\\ell_p$ "
                "version is the report's",
        rank='agrees',
        where='{ref}`ch2-check-sensitivity`',
    ),
    ReviewRow(
        lens='sources',
        passage='Definition 2.3 ($(\\varepsilon, \\delta)$-DP), their Definition 2.4',
        compared_with='Dwork and Roth',
        finding='the same definition',
        rank='agrees',
        where='{prf:ref}`report-definition-2-3`',
    ),
    ReviewRow(
        lens='sources',
        passage='Lemma 2.1 (post-processing), their Proposition 2.1',
        compared_with='Dwork and Roth',
        finding='the statement matches, for randomised maps; the proof covers deterministic maps only',
        rank='changes a proof',
        where='{ref}`err-lemma-2-1-randomised`',
    ),
    ReviewRow(
        lens='sources',
        passage='Lemma 2.2 (composition), their Theorem 3.16',
        compared_with='Dwork and Roth',
        finding='stated as there; both need independent randomness, which neither says',
        rank='remark',
        where='{ref}`err-lemma-2-2-independence`',
    ),
    ReviewRow(
        lens='sources',
        passage='Lemma 2.4 ($\\mathbb E[X^\\top AX]$), citing Bates',
        compared_with='the lecture notes',
        finding='holds for any $A$ and any law with two moments; the symbol $\\boldsymbol\\mu$ for '
                '$\\boldsymbol\\mu_X$ is shared with the source',
        rank='cosmetic',
        where='{ref}`err-lemma-2-4-mean`',
    ),
    ReviewRow(
        lens='sources',
        passage='Theorem 1, their Theorem 3.22: $\\sigma = \\Delta\\sqrt{2\\ln(1.25/\\delta)}/\\varepsilon$',
        compared_with='Dwork and Roth: $c^2 > 2\\ln(1.25/\\delta)$, strictly; $\\varepsilon \\in (0, 1)$',
        finding='the report states the excluded boundary value; it is private by continuity of the privacy profile',
        rank='remark',
        where='{ref}`err-theorem-1-boundary`',
    ),
    ReviewRow(
        lens='sources',
        passage='Theorem 2 and eq. (2), their Theorem 8',
        compared_with='Balle and Wang',
        finding='the same condition, an equivalence, in units of $\\Delta$; $\\sigma_{opt}$ exists for $0 < '
                '\\delta < 1$',
        rank='agrees',
        where='{ref}`ch3-check-profile`',
    ),
    ReviewRow(
        lens='sources',
        passage='Theorem 3, citing Pagh and Lebeda',
        compared_with='their elliptical mechanism',
        finding='the scaling and the error $\\sigma_{opt}^2\\|\\boldsymbol\\Delta\\|_1^2$ agree, for positive '
                '$\\Delta_j$; the lemma numbers were not compared',
        rank='agrees',
        where='{ref}`ch3-check-theorem3`',
    ),
    ReviewRow(
        lens='sources',
        passage="Lemma 4.1's second-order test, citing Magnus and Neudecker",
        compared_with='their bordered-determinant criterion',
        finding='the criterion needs the minors of orders 3 to $d + 1$ and gives a strict local minimum; '
                'the report asks for order 2 too, always negative',
        rank='changes a proof',
        where='{ref}`err-lemma-4-1-local-global`',
    ),
    ReviewRow(
        lens='sources',
        passage="Lemma 4.2: Bernstein's condition (17) and inequality (23), citing Wainwright",
        compared_with='his Bernstein bound, $\\exp(-x^2/(2(v + Lx)))$',
        finding='(23) is the classical form; it follows from the cited one with the same constants and '
                'range, one-sided as used',
        rank='cosmetic',
        where='{ref}`err-lemma-4-2-bernstein-source`',
    ),
    ReviewRow(
        lens='sources',
        passage='Section 4: no tail bound of use, citing Hanson and Wright',
        compared_with="Laurent and Massart's Lemma 1",
        finding='its hypotheses (non-negative weights, any $t > 0$) hold, with its constants; it bounds the'
                ' error for every $n$',
        rank='changes a result',
        where='{ref}`err-no-useful-tail-bound`',
    ),
    ReviewRow(
        lens='sources',
        passage="Section 7, Extra: Bernstein's inequality for bounded summands",
        compared_with='the bounded form',
        finding='needs summands bounded almost surely, which Corollary 7.1 gives only with high probability',
        rank='remark',
        where='{ref}`err-extra-bounded-bernstein`',
    ),
    ReviewRow(
        lens='twice',
        passage="Algorithm 3's noise, $2C\\sigma_{opt}b_j^{-1}$",
        compared_with="Section 4's text",
        finding='the same noise',
        rank='agrees',
        where='{ref}`ch4-check-eq9`',
    ),
    ReviewRow(
        lens='twice',
        passage="Algorithm 3's radius: minimal $C$ with $\\Pr[\\|\\hat x\\| > C] \\le p_C$, $\\hat x$ centred",
        compared_with='Section 4: $\\Pr[\\|(x_i - \\hat{\\boldsymbol\\mu}) \\odot \\boldsymbol b\\| > C] < 1/n$',
        finding='a strict sign with no minimum, and a law centred at the true mean only if '
                '$\\hat{\\boldsymbol\\mu} = \\boldsymbol\\mu$',
        rank='changes a proof',
        where='{ref}`err-theorem-4-centre`, {ref}`err-strict-minimum`',
    ),
    ReviewRow(
        lens='twice',
        passage="the same radius in Theorem 4's proof and at the end of Section 4",
        compared_with='Algorithm 3',
        finding='$\\ge C$ for $> C$ (the same for a continuous law); a norm compared with $C^2$',
        rank='cosmetic',
        where='{ref}`err-strict-minimum`, {ref}`err-section-4-uncentred-norm`',
    ),
    ReviewRow(
        lens='twice',
        passage="Section 5's radius $C_n$: $\\Pr[\\|x_i\\|^2 > C_n^2] \\le 1/n$",
        compared_with='Section 4',
        finding='uncentred; the computation centres it',
        rank='cosmetic',
        where='{ref}`err-section-5-uncentred`',
    ),
    ReviewRow(
        lens='twice',
        passage="Algorithm 3's scaling input: $\\mathbb E\\|(x_i - \\hat{\\boldsymbol\\mu}) \\odot \\boldsymbol "
                'b\\|^2 = 1$',
        compared_with='eq. (10) and Lemma 4.1',
        finding='the same constraint only when $\\hat{\\boldsymbol\\mu} = \\boldsymbol\\mu$',
        rank='changes a proof',
        where='{ref}`err-theorem-4-centre`',
    ),
    ReviewRow(
        lens='twice',
        passage="Algorithm 3's loop and output",
        compared_with="Section 4's clipping map and $\\bar f$",
        finding='the loop adds $\\hat{\\boldsymbol\\mu}$ inside and rescales it: the wrong vector',
        rank='changes a result',
        where='{ref}`err-algorithm-3-loop`',
    ),
    ReviewRow(
        lens='twice',
        passage='Section 4\'s data model: normal coordinates, "equivalent" to no correlation',
        compared_with='Lemma 4.1, Theorem 4, Section 5: independent coordinates',
        finding='normal and uncorrelated is weaker than the joint model the results use',
        rank='cosmetic',
        where='{ref}`err-normal-marginals`',
    ),
    ReviewRow(
        lens='twice',
        passage="Algorithm 3's input $\\hat{\\boldsymbol\\mu}$, a private estimate",
        compared_with='Section 4: bought with part of the budget',
        finding='the output line omits the budget spent on the centre',
        rank='remark',
        where='{ref}`err-mu-hat-budget`',
    ),
    ReviewRow(
        lens='twice',
        passage='Section 6.1: estimating $\\boldsymbol\\mu$ is "equivalent" to the problem',
        compared_with='Section 4: "almost the same", but loose and about the distribution',
        finding='Section 4 is right',
        rank='cosmetic',
        where='{ref}`err-mu-hat-equivalent`',
    ),
    ReviewRow(
        lens='twice',
        passage="Lemma 4.2's threshold and range of $t$",
        compared_with='the end of its proof',
        finding='the same threshold and range',
        rank='agrees',
        where='{ref}`ch4-check-bernstein`',
    ),
    ReviewRow(
        lens='twice',
        passage="Theorem 4's bound and condition",
        compared_with='the end of its proof',
        finding='the same (two intermediate lines slip, cosmetic entries of their own)',
        rank='agrees',
        where='{ref}`ch4-check-thm4-algebra`',
    ),
    ReviewRow(
        lens='twice',
        passage="Theorem 4's use in Section 6: $e^{-t} = 1/n$",
        compared_with='Lemma 4.2: $e^{-t^2}$',
        finding='$t = \\sqrt{\\ln n}$, as in the proof',
        rank='cosmetic',
        where='{ref}`err-section-6-exponent`',
    ),
    ReviewRow(
        lens='twice',
        passage="Lemma 4.1's $b_j$ and $\\lambda$, eqs. (15)-(16)",
        compared_with="Appendix A's stationary point",
        finding='the same',
        rank='agrees',
        where='{ref}`ch4-check-solve`',
    ),
    ReviewRow(
        lens='twice',
        passage="Section 4's bordered Hessian",
        compared_with="Appendix A's matrix at the point",
        finding='border exponent $2/3$ for $3/2$, diagonal $3\\sigma_j^2 + 1$ for $4\\sigma_j^2$, and '
                '$\\sigma_1$ for $\\sigma_d$',
        rank='changes a proof',
        where='{ref}`err-appendix-a-entries`',
    ),
    ReviewRow(
        lens='twice',
        passage='Section 4: values only on the diagonal, first row and column',
        compared_with='Appendix A: all entries positive',
        finding='Section 4 is right; the proof needs non-zero border and positive diagonal',
        rank='changes a proof',
        where='{ref}`err-appendix-a-positive`',
    ),
    ReviewRow(
        lens='twice',
        passage='Section 4 and Appendix A\'s title: leading principal "component"',
        compared_with="Appendix A's text: minor",
        finding='a minor is meant',
        rank='cosmetic',
        where='{ref}`err-principal-minor`',
    ),
    ReviewRow(
        lens='twice',
        passage='Section 3: ellipsoid radii $b_j/\\Delta_j$, noise $\\mathcal N(0, \\sigma_{opt})$',
        compared_with='Algorithm 2 and Theorem 3',
        finding='semi-axes $\\Delta_j/b_j$; a standard deviation, not a variance',
        rank='cosmetic',
        where='{ref}`err-ellipsoid-radii`, {ref}`err-noise-variance`',
    ),
    ReviewRow(
        lens='twice',
        passage="Section 5's range $[1, d]$",
        compared_with="Section 3's $[1, d)$",
        finding="Section 3's is right for both",
        rank='remark',
        where='{ref}`err-improvement-range`',
    ),
    ReviewRow(
        lens='twice',
        passage="Section 5's $\\mathcal E_n = (2C_n\\sigma_{opt})^2$",
        compared_with='eqs. (1), (5) and the published values',
        finding='the factor $d$ is missing; the published values carry it',
        rank='changes a result',
        where='{ref}`err-error-without-transformation`',
    ),
    ReviewRow(
        lens='twice',
        passage="Section 5's text on Figure 1: shares of the variance",
        compared_with="Figure 1's caption: of the standard deviations",
        finding='the caption is right',
        rank='cosmetic',
        where='{ref}`err-figure-1-variance`',
    ),
    ReviewRow(
        lens='twice',
        passage='eq. (1) via Corollary 2.1',
        compared_with="Corollary 2.1's last expression",
        finding='one coordinate of the mean for all',
        rank='cosmetic',
        where='{ref}`err-corollary-2-1`',
    ),
    ReviewRow(
        lens='twice',
        passage='Section 4: the noise from Theorem 2',
        compared_with='a later line: "as lemma 2.1 shows"',
        finding='post-processing justifies only the map back',
        rank='changes a proof',
        where='{ref}`err-clipped-noise-attribution`',
    ),
    ReviewRow(
        lens='twice',
        passage='eq. (25): radius $1/2$ and noise $\\mathcal N(0, \\sigma_{opt}^2)$',
        compared_with="Section 4's sensitivity $2C$",
        finding='consistent ($2 \\cdot 1/2 = 1$); the event is uncentred',
        rank='cosmetic',
        where='{ref}`err-eq-25-centre`',
    ),
    ReviewRow(
        lens='indices',
        passage='Appendix A: every minor for $r \\in \\{2, \\dots, d + 1\\}$',
        compared_with="the criterion's orders 3 to $d + 1$",
        finding="every needed order is covered; order 2 is automatic and serves as the induction's base",
        rank='agrees',
        where='{prf:ref}`book-criterion-4-a`',
    ),
    ReviewRow(
        lens='indices',
        passage='the base case $r = 2$',
        compared_with='a $2 \\times 2$ determinant',
        finding='the first term is written $0 \\cdot \\bar H_{2,1,1}$',
        rank='cosmetic',
        where='{ref}`err-appendix-a-base-case`',
    ),
    ReviewRow(
        lens='indices',
        passage='eq. (26) for $r = 3, \\dots, d + 1$: expansion along the last column',
        compared_with='the cofactors of rows 1 and $r$',
        finding='right: $B_{r-1}$ drops row 1 and column $r$, sign $(-1)^{1+r}$; it holds at $r = 2$ too',
        rank='agrees',
        where='{ref}`appa-check-induction`',
    ),
    ReviewRow(
        lens='indices',
        passage="$B_{r-1}$'s last row and its expansion, sign $(-1)^{r-1+1}$",
        compared_with='the minor $\\tilde B_{r-1}$',
        finding='right: $\\tilde B_{r-1}$ is diagonal of order $r - 2$, empty only at $r = 2$, where the '
                'step is not used',
        rank='agrees',
        where='{ref}`appa-check-induction`',
    ),
    ReviewRow(
        lens='indices',
        passage='eq. (27)',
        compared_with='eq. (26)',
        finding='drops the factor $\\bar H_{r,1,r}$; right because it is positive',
        rank='remark',
        where='{ref}`err-eq-27-factor`',
    ),
    ReviewRow(
        lens='indices',
        passage="the displayed matrix's last row",
        compared_with='its symmetry',
        finding='$\\sigma_1$ where $\\sigma_d$ belongs',
        rank='changes a proof',
        where='{ref}`err-appendix-a-entries`',
    ),
    ReviewRow(
        lens='indices',
        passage="Lemma 4.2's proof: $k \\ge 2$, split at $k = 2$; products from $c = 3$",
        compared_with='the moments $(2k - 1)!!$',
        finding="the cases are right; the transcription's product from $c = 2$ is 4 times too large; $k = "
                '3$ binds $L$',
        rank='cosmetic',
        where='{ref}`err-lemma-4-2-product`, {ref}`err-lemma-4-2-constant-l`',
    ),
    ReviewRow(
        lens='indices',
        passage='eq. (24): $\\sum_{i=1}^db_j^{-2}$',
        compared_with='eq. (9)',
        finding='summation index $i$, summand in $j$',
        rank='cosmetic',
        where='{ref}`err-eq-24-index`',
    ),
)

_REF = re.compile(r"\{(?:ref|prf:ref)\}`([a-z0-9-]+)`")
_PLAIN_REF = re.compile(r"\{ref\}`([a-z0-9-]+)`")


def _linked(where: str) -> str:
    """The row's references with their link texts ("erratum", "check"): an anchor before a paragraph has no
    title of its own for ``{ref}`` to show."""
    return _PLAIN_REF.sub(lambda m: f"{{ref}}`{'erratum' if m.group(1).startswith('err-') else 'check'} "
                                    f"<{m.group(1)}>`", where)


def list_table(lens: str, *, label: str) -> str:
    """The rows of one lens as a MyST ``list-table`` with its caption and ``label`` (numbered in the book)."""
    check_choice("lens", lens, LENSES)
    if not isinstance(label, str):
        raise TypeError(f"label must be a string (the table's name), got label of type {type(label).__name__}")
    head = (f"```{{list-table}} {LENSES[lens]}\n:header-rows: 1\n:name: {label}\n:class: egm-review\n\n"
            "* - \\#\n  - the report\n  - compared with\n  - finding\n  - rank\n  - entry or check\n")
    rows = [r for r in ROWS if r.lens == lens]
    first = sum(1 for r in ROWS[: ROWS.index(rows[0])])
    body = "".join(f"* - {first + i + 1}\n  - {r.passage}\n  - {r.compared_with}\n  - {r.finding}\n"
                   f"  - {r.rank}\n  - {_linked(r.where)}\n" for i, r in enumerate(rows))
    return head + body + "```"


@dataclass(frozen=True)
class Consistency(Finding):
    """The review's rows against the errata page and the tables shown."""

    rows: int
    by_rank: Mapping[str, int]  #: rows per rank
    longest_finding: int  #: words in the longest finding
    missing: tuple[str, ...]  #: linked errata entries that the errata page lacks
    misranked: tuple[str, ...]  #: rows whose first errata entry sits under another rank
    unlinked: tuple[str, ...]  #: rows with an error but no errata entry, or agreeing rows that link one
    tables_match: bool  #: the page's tables are the ones list_table writes

    GLUE = MappingProxyType({"review-rows": "rows", "review-result": "n_result", "review-proof": "n_proof",
                             "review-cosmetic": "n_cosmetic", "review-remark": "n_remark",
                             "review-agrees": "n_agrees"})

    @property
    def n_result(self) -> int:
        return self.by_rank.get("changes a result", 0)

    @property
    def n_proof(self) -> int:
        return self.by_rank.get("changes a proof", 0)

    @property
    def n_cosmetic(self) -> int:
        return self.by_rank.get("cosmetic", 0)

    @property
    def n_remark(self) -> int:
        return self.by_rank.get("remark", 0)

    @property
    def n_agrees(self) -> int:
        return self.by_rank.get("agrees", 0)

    @property
    def ok(self) -> bool:
        return (not self.missing and not self.misranked and not self.unlinked and self.tables_match
                and self.longest_finding <= 30)

    @property
    def evidence(self) -> str:
        return (f"{self.rows} rows: " + ", ".join(f"{v} {k}" for k, v in self.by_rank.items())
                + f"; every linked entry is on the errata page under the row's rank; longest finding "
                f"{self.longest_finding} words; the page's tables are the generated ones.")


def consistency(errata_ranks: Sequence[Mapping[str, object]], page_markdown: str) -> Consistency:
    """Check :data:`ROWS` against the errata page's ranks (``errata_ranks``: the records of
    :func:`egmbook.claims.errata_backing`, with their ``anchors``) and against the Markdown of the
    page that shows them (``page_markdown``, which must contain each lens's :func:`list_table`)."""
    if not isinstance(page_markdown, str):
        raise TypeError(f"page_markdown must be a string, got page_markdown of type {type(page_markdown).__name__}")
    rank_of: dict[str, str] = {}
    for record in errata_ranks:
        anchors = record["anchors"]
        if not isinstance(anchors, (list, tuple)):
            raise TypeError(f"errata_ranks: each record's anchors must be a list, got {anchors!r}")
        rank_of.update((a, str(record["rank"])) for a in anchors)
    missing, misranked, unlinked = [], [], []
    for i, row in enumerate(ROWS, 1):
        errata = [ref for ref in _REF.findall(row.where) if ref.startswith("err-")]
        missing += [ref for ref in errata if ref not in rank_of]
        if (row.rank == "agrees") != (not errata):
            unlinked.append(f"row {i}")
        elif errata and errata[0] in rank_of and rank_of[errata[0]] != RANKS[row.rank]:
            misranked.append(f"row {i}: {errata[0]} under {rank_of[errata[0]]!r}")
    tables = all(list_table(lens, label=f"cov-tab-review-{k + 1}") in page_markdown
                 for k, lens in enumerate(LENSES))
    counts = Counter(r.rank for r in ROWS)
    return Consistency(len(ROWS), {k: counts.get(k, 0) for k in RANKS}, max(len(r.finding.split()) for r in ROWS),
                       tuple(sorted(set(missing))), tuple(misranked), tuple(unlinked), tables)

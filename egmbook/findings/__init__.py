"""The chapters' findings: pure functions that turn computations and loaded results into frozen, typed records.

As the QuantEcon lectures keep their analysis in a package, the book keeps its analysis here,
and a chapter's cell calls a finding, shows its table or figure, checks its verdict and glues
its values: ``g = offmodel.goals(peers, off)``, then ``check(g.off_model.ok, ...)``, then
``glue_values(g.glue(), prefix="ch9-")``.

Every record is a frozen dataclass derived from :class:`Finding`: its fields are the
numbers a check compares, ``ok`` (where it has one) is the check's verdict, ``evidence`` the
sentence of numbers the check shows, and :meth:`Finding.glue` the values the prose quotes,
by the names the chapter glues them under.  The findings that take no argument are the
chapters' fixed, seeded experiments: their chapter runs them and nbval compares its outputs.

One module per chapter or group of chapters:

- :mod:`egmbook.findings.preliminaries`   chapter 2: sensitivity, post-processing, composition, calibrations
- :mod:`egmbook.findings.algorithms`      chapter 3: Theorems 1-3, Algorithms 1 and 2
- :mod:`egmbook.findings.problem_setup`   chapter 4 and 4a: eqs. (7)-(10), clipping, Algorithm 3
- :mod:`egmbook.findings.second_order`    section 4b: Lemma 4.1, its derivation and its minimum
- :mod:`egmbook.findings.theorem4`        chapters 4c and 4d: Lemma 4.2 and Theorem 4
- :mod:`egmbook.findings.figure2`         chapters 5 and 5a: Figures 1 and 2
- :mod:`egmbook.findings.improvement_range` chapters 5c and 5d: the reduction to Schur-concavity and its thresholds
- :mod:`egmbook.findings.report_review`   the coverage page: the three-lens pass over the report
- :mod:`egmbook.findings.centre_privacy`  chapter 7a: the private centre
- :mod:`egmbook.findings.clipping_choice` chapter 7c: each method at its own optimal p_C, and the free optimum
- :mod:`egmbook.findings.peers`           chapter 8 and its sections: the peers on PLAN's benchmarks
- :mod:`egmbook.findings.offmodel`        chapter 9 and 9b: diagnosis, goals and verdicts off the model
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

__all__ = ["Finding"]


@dataclass(frozen=True)
class Finding:
    """Base of the findings' records: :meth:`glue` gives the values named in ``GLUE``.

    ``GLUE`` maps a glue name (without the chapter's prefix) to the attribute, field or
    property, that holds its value.
    """

    GLUE: ClassVar[Mapping[str, str]] = MappingProxyType({})

    def glue(self) -> dict[str, Any]:
        """The values the chapter's prose quotes, by glue name (pass to ``egmbook.display.glue_values``)."""
        return {name: getattr(self, attr) for name, attr in self.GLUE.items()}

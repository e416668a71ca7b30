"""The result of one evaluated rule: an assertion, as OpenLineage's ``dataQualityAssertions`` 1-1-0 carries it.

``success`` false with ``actual`` :data:`UNKNOWN` means the metadata did not give an input: never a silent pass.
``actual`` :data:`NOT_APPLICABLE` (``success`` true) is a rule that cannot apply, the reason in ``description``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from iceberg_lineage.quality.schema import SchemaChange

UNKNOWN = "unknown"
NOT_APPLICABLE = "not applicable"
_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Assertion:
    assertion: str
    name: str
    success: bool
    severity: str
    expected: str
    actual: str
    column: str | None = None
    description: str | None = None
    params: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    #: The schema change behind a ``schema`` assertion (what an alert is made of).
    change: SchemaChange | None = None

    @property
    def unknown(self) -> bool:
        return self.actual == UNKNOWN

    @property
    def blocks(self) -> bool:
        """Fails the gate: an error-severity assertion that failed, or whose input was unknown."""
        return self.severity == "error" and not self.success

    @property
    def status(self) -> str:
        """``pass``, ``fail`` (error severity), ``warn`` (a warn-severity failure: the gate stays open), ``unknown``
        or ``n/a``: one word for a terminal. OpenLineage's facet has only ``success``: false for fail and warn."""
        if self.actual == NOT_APPLICABLE:
            return "n/a"
        if self.success:
            return "pass"
        if self.unknown:
            return UNKNOWN
        return "fail" if self.severity == "error" else "warn"

    def as_json(self) -> dict[str, Any]:
        """The assertion's OpenLineage fields (absent ones left out)."""
        out: dict[str, Any] = {
            "assertion": self.assertion, "success": self.success, "name": self.name, "severity": self.severity,
            "expected": self.expected, "actual": self.actual,
        }
        for key in ("column", "description"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.params:
            out["params"] = dict(self.params)
        return out

"""Pure evaluation of check rules over snapshot statistics and schemas (layer 3: below lineage, above stats).

:mod:`~iceberg_lineage.quality.rules` parses the ``checks:`` configuration, :mod:`~iceberg_lineage.quality.evaluate`
turns rules and statistics into :class:`Assertion` values, :mod:`~iceberg_lineage.quality.schema` diffs schemas by
field id, :mod:`~iceberg_lineage.quality.alerts` makes schema-change alerts. No I/O here.

Names load on first use: the statistics facet needs only the schema diff, and ``events`` should not import the
rules and their evaluation to print one table's events.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from iceberg_lineage.lazy import lazy_exports

if TYPE_CHECKING:
    from iceberg_lineage.quality.alerts import Alert, schema_alerts
    from iceberg_lineage.quality.assertions import NOT_APPLICABLE, UNKNOWN, Assertion
    from iceberg_lineage.quality.evaluate import CheckInputs, evaluate, schema_assertions
    from iceberg_lineage.quality.rules import DEFAULT_RULES, ChecksConfig, Rule, RuleSet, checks_config, rule_set
    from iceberg_lineage.quality.schema import SchemaChange, is_promotion, schema_diff

_LAZY = {
    **dict.fromkeys(("Alert", "schema_alerts"), "iceberg_lineage.quality.alerts"),
    **dict.fromkeys(("NOT_APPLICABLE", "UNKNOWN", "Assertion"), "iceberg_lineage.quality.assertions"),
    **dict.fromkeys(("CheckInputs", "evaluate", "schema_assertions"), "iceberg_lineage.quality.evaluate"),
    **dict.fromkeys(("DEFAULT_RULES", "ChecksConfig", "Rule", "RuleSet", "checks_config", "rule_set"),
                    "iceberg_lineage.quality.rules"),
    **dict.fromkeys(("SchemaChange", "is_promotion", "schema_diff"), "iceberg_lineage.quality.schema"),
}
__all__ = sorted(_LAZY)
__getattr__ = lazy_exports(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

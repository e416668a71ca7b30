"""Pure evaluation of check rules over snapshot statistics and schemas (layer 3: below lineage, above stats).

:mod:`~iceberg_lineage.quality.rules` parses the ``checks:`` configuration, :mod:`~iceberg_lineage.quality.evaluate`
turns rules and statistics into :class:`Assertion` values, :mod:`~iceberg_lineage.quality.schema` diffs schemas by
field id, :mod:`~iceberg_lineage.quality.alerts` makes schema-change alerts. No I/O here.
"""
from iceberg_lineage.quality.alerts import Alert, schema_alerts
from iceberg_lineage.quality.assertions import NOT_APPLICABLE, UNKNOWN, Assertion
from iceberg_lineage.quality.evaluate import CheckInputs, evaluate, schema_assertions
from iceberg_lineage.quality.rules import DEFAULT_RULES, ChecksConfig, Rule, RuleSet, checks_config, rule_set
from iceberg_lineage.quality.schema import SchemaChange, is_promotion, schema_diff

__all__ = [
    "Alert", "Assertion", "CheckInputs", "ChecksConfig", "DEFAULT_RULES", "NOT_APPLICABLE", "Rule", "RuleSet",
    "SchemaChange", "UNKNOWN", "checks_config", "evaluate", "is_promotion", "rule_set", "schema_alerts",
    "schema_assertions", "schema_diff",
]

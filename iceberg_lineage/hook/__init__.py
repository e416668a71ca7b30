"""Entry point: lineage straight from PyIceberg (``observe``, run contexts, ``iceberg-lineage run``)."""
from iceberg_lineage.hook.reporter import OpenLineageMetricsReporter, bootstrap, observe, observe_all

__all__ = ["OpenLineageMetricsReporter", "bootstrap", "observe", "observe_all"]

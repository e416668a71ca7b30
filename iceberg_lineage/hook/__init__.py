"""Entry point: lineage straight from PyIceberg (``observe``, run contexts, ``iceberg-lineage run``)."""
from iceberg_lineage.hook.context import OpenRun, current_run, run
from iceberg_lineage.hook.process import bootstrap
from iceberg_lineage.hook.reporter import OpenLineageMetricsReporter, observe, observe_all

__all__ = ["OpenLineageMetricsReporter", "OpenRun", "bootstrap", "current_run", "observe", "observe_all", "run"]

"""The REST bridge: ``iceberg-lineage proxy`` in front of an Iceberg REST catalog turns every engine's commits into
OpenLineage (routes -> forward -> app -> report -> the one delivery path; server runs it)."""
from iceberg_lineage.proxy.app import make_app
from iceberg_lineage.proxy.server import serve

__all__ = ["make_app", "serve"]

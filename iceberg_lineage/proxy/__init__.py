"""The proxy (the REST-catalog bridge): ``iceberg-lineage proxy`` in front of an Iceberg REST catalog turns every
engine's commits into OpenLineage. Serving processes: routes -> forward -> app -> capture; the lineage process:
collector -> interpreter -> tracker -> outbox -> the one delivery path; server runs both."""
from iceberg_lineage.proxy.app import make_app
from iceberg_lineage.proxy.server import serve

__all__ = ["make_app", "serve"]

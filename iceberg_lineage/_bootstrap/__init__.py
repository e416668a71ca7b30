"""Holds the ``sitecustomize`` that ``iceberg-lineage run`` puts first on the child's PYTHONPATH."""

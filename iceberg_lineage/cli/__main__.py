"""``python -m iceberg_lineage.cli``."""
from iceberg_lineage.cli import main

main()

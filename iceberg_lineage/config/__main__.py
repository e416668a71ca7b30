"""``python -m iceberg_lineage.config``: write docs/configuration.md from the declarations."""
from pathlib import Path

from iceberg_lineage.config import REFERENCE_PATH, reference_markdown

Path(REFERENCE_PATH).write_text(reference_markdown())

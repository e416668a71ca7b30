"""The optional extras (``pip install 'iceberg-lineage[EXTRA]'``): which extra brings which library, and the one-line
error for a feature whose library is not installed. The core never imports these libraries at module level."""
from __future__ import annotations

import importlib.util

from iceberg_lineage.errors import ConfigError

#: The extra of pyproject.toml that installs each optional library (by its import name).
EXTRA_OF: dict[str, str] = {
    "aiohttp": "proxy",
    "confluent_kafka": "kafka",
    "distributed": "dask",
    "matplotlib": "notebook",
    "IPython": "notebook",
    "boto3": "glue",
}


def require(feature: str, module: str) -> None:
    """Raise a :class:`ConfigError` naming the extra to install when ``module`` (a key of :data:`EXTRA_OF`) is not
    importable; checked before the import, so no traceback of a half-imported module is ever shown."""
    if importlib.util.find_spec(module) is None:
        raise ConfigError(f"{feature} needs {module}, which is not installed: "
                          f"pip install 'iceberg-lineage[{EXTRA_OF[module]}]'")

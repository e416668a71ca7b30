"""A PyIceberg SQL catalog (``py-catalog-impl``) whose ``load_table`` of a table named ``stuck`` never returns, as
a catalog or object store that stops answering mid-call would: for the per-table time limit of ``scan``."""
from __future__ import annotations

import time
from typing import Any

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import SqlCatalog


class StuckCatalog(SqlCatalog):
    def load_table(self, identifier: Any) -> Any:
        if Catalog.identifier_to_tuple(identifier)[-1] == "stuck":
            time.sleep(3600)
        return super().load_table(identifier)

"""Names a package exports without importing their modules until first use (PEP 562 ``__getattr__``): importing
the package stays cheap for commands that never touch them."""
from __future__ import annotations

from importlib import import_module
from typing import Any, Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``exports[name]`` (a module path) at first use and keeps the value in
    ``namespace`` (the package's globals), so later lookups never come back here."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = namespace[name] = getattr(import_module(module), name)
        return value

    return __getattr__

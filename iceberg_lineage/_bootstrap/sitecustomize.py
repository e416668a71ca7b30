"""Instruments PyIceberg in every Python started under ``iceberg-lineage run``.

Python imports the first ``sitecustomize`` on its path at startup; this one runs the next one on the path (the
environment's own, if any) and then attaches the process to the parent's run. It never stops the program: if
iceberg_lineage cannot be used here, it says so on stderr and the program runs uninstrumented.
"""
import importlib.machinery
import importlib.util
import os
import sys


def _chain() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


def _instrument() -> None:
    try:
        from iceberg_lineage.hook import bootstrap

        bootstrap(os.environ)
    except Exception as exc:  # noqa: BLE001 - the user's program runs regardless
        sys.stderr.write(f"iceberg-lineage: not instrumenting this process ({type(exc).__name__}: {exc})\n")


try:
    _chain()
finally:
    _instrument()

"""Each notebook runs top to bottom on a fresh kernel of this venv; its outputs show statistics as HTML, at least
one plot, and the number of events the commits and snapshots call for. Nothing is written into the repository."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
KERNEL = "iceberg-lineage-test"


@pytest.fixture(scope="module")
def mpl_config(tmp_path_factory) -> Path:
    """One matplotlib cache for all notebooks (its font cache takes seconds to build)."""
    return tmp_path_factory.mktemp("mplconfig")


def tree(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.rglob("*")}


def execute(name: str, tmp_path: Path, monkeypatch, mpl_config: Path,
            folder: Path = NOTEBOOKS) -> nbformat.NotebookNode:
    """Run a notebook from ``folder`` (default: its own, where relative paths resolve) with temp dirs under
    tmp_path."""
    kernels = tmp_path / "kernels"
    (kernels / KERNEL).mkdir(parents=True)
    (kernels / KERNEL / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "iceberg-lineage tests", "language": "python",
    }))
    (tmp_path / "home").mkdir(exist_ok=True)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("MPLCONFIGDIR", str(mpl_config))
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), "commit notebooks stripped"
    km = KernelManager(kernel_name=KERNEL, kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]))
    before = tree(REPO / "notebooks"), tree(REPO / "tests" / "fixtures")
    NotebookClient(nb, km=km, timeout=120, resources={"metadata": {"path": str(folder)}}).execute()
    assert (tree(REPO / "notebooks"), tree(REPO / "tests" / "fixtures")) == before, "the notebook wrote into the repo"
    return nb


def outputs(nb: nbformat.NotebookNode, mime: str) -> list[str]:
    return [o["data"][mime] for cell in nb.cells for o in cell.get("outputs", ()) if mime in o.get("data", {})]


def stdout(nb: nbformat.NotebookNode) -> str:
    return "".join(o["text"] for cell in nb.cells for o in cell.get("outputs", ())
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def test_quickstart(tmp_path, monkeypatch, mpl_config):
    nb = execute("quickstart.ipynb", tmp_path, monkeypatch, mpl_config)
    html = outputs(nb, "text/html")
    assert any('class="iceberg-lineage-snapshot"' in h for h in html)
    assert any('class="iceberg-lineage-history"' in h for h in html)
    assert len(outputs(nb, "image/png")) >= 3  # history.plot(), columns, %lineage stats
    # CREATE, 3 appends, the overwrite's delete + append, ALTER (schema) and its checks run (the schema alert,
    # issue 18), 1 append, 1 scan: 10 runs, each a START and a terminal event (issue 19)
    assert "20 events sent" in stdout(nb)
    events_table = next(h for h in html if "<th" in h and ">job</th>" in h)
    assert events_table.count("<tr>") == 1 + 20
    assert any(h.startswith("<details open><summary>COMPLETE iceberg-lineage/shop.orders.scan") for h in html)
    scan_report = next(h for h in html if h.startswith("<details open><summary>icebergScanReport"))
    assert "&quot;resultDataFiles&quot;" in scan_report and "amount" in scan_report


def test_catalog_scan(tmp_path, monkeypatch, mpl_config, sql_catalog):
    from iceberg_lineage.demo.tables import write_demo_table

    nb = execute("catalog_scan.ipynb", tmp_path, monkeypatch, mpl_config)
    # the same tables written here: the scan emits one run per snapshot, and a checks run for each table's schema
    # change (issue 18), each START and COMPLETE, and its own run (what `scan --dry-run` prints)
    snapshots = sum(len(write_demo_table(sql_catalog, f"sales.{name}", commits=commits).metadata.snapshots)
                    for name, commits in (("orders", 8), ("returns", 5)))
    out = stdout(nb)
    assert f"{2 * snapshots + 2 * 2 + 2} events would be sent" in out
    assert f"{snapshots} snapshots emitted to file .iceberg-lineage/events.jsonl" in out
    assert "0 snapshots left to send" in out
    assert any("iceberg-lineage scan (dry run)" in h for h in outputs(nb, "text/html"))


def test_foreign_tables_runs_outside_the_clone(tmp_path, monkeypatch, mpl_config):
    """On the sample tables the package builds (equality deletes, an evolved partition spec), from a folder that is
    not the clone's: nothing it reads lies in the repository."""
    outside = tmp_path / "outside"
    outside.mkdir()
    nb = execute("foreign_tables.ipynb", tmp_path, monkeypatch, mpl_config, folder=outside)
    assert not any("tests/fixtures" in "".join(cell.source) for cell in nb.cells)
    html = outputs(nb, "text/html")
    history = next(h for h in html if 'class="iceberg-lineage-history"' in h)
    assert history.count("<tr>") == 1 + 6 and history.count(">delete<") == 4
    evolved = next(h for h in html if 'class="iceberg-lineage-snapshot"' in h and "event_type" in h)
    assert re.search(r">0</td><td[^>]*>2</td><td[^>]*>2</td>.*>1</td><td[^>]*>4</td><td[^>]*>4</td>", evolved)
    assert len(outputs(nb, "image/png")) >= 2
    plain = "".join(outputs(nb, "text/plain"))
    assert "PyIceberg does not yet support equality deletes" in plain
    assert "2 data files, 6 records, 4 equality-delete files (4 deleted rows)" in stdout(nb)


#: What a notebook may import from the package: the public API (docs/api.md), the notebook helpers, and the demo's
#: sample-table writers.
PUBLIC = ("iceberg_lineage", "iceberg_lineage.notebook", "iceberg_lineage.demo.tables", "iceberg_lineage.demo.samples")


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_notebooks_use_the_public_api_only(name):
    import ast

    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    code = "\n".join("\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith("%"))
                     for cell in nb.cells if cell.cell_type == "code")
    imported = {node.module if isinstance(node, ast.ImportFrom) else alias.name
                for node in ast.walk(ast.parse(code)) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names}
    assert sorted(m for m in imported if m and m.split(".")[0] == "iceberg_lineage" and m not in PUBLIC) == []
    assert "tests/fixtures" not in code and "../" not in code

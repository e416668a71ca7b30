"""A rescan with nothing changed on a REST catalog that sends ETags, against a plain PyIceberg loop in the same run.

Apache Iceberg's own REST server (``RESTCatalogServer`` 1.11, from ``make provision``'s ``.cache/interop/iceberg-rest``)
runs on a free port of 127.0.0.1 over a SQLite JDBC catalog; N tables x 3 commits are the tables of
``scan_scale.py``'s warehouse, registered in it (``register_table``: seconds instead of minutes of commits).

Then, each in a fresh process, timed once PyIceberg is imported and the catalog made (iceberg-lineage's own imports
count): the loop (list, ``load_table`` each, read its snapshot summaries); ``scan --depth summary`` with a fresh state
file; and the same scan again with that state, which asks each table's ``loadTable`` with its ETag and gets 304.
Each prints its CPU seconds (this process: the server's work is not in it), the server's CPU seconds during it, the
loadTable requests it made by answer status, and the bytes of their bodies. The server reads a table's metadata file
to answer each request, 304 or not, so a rescan still waits on the server once per table: its CPU per 304 is about
two thirds of its CPU per full answer, which bounds the rescan's ratio from below.

    .venv/bin/python benchmarks/rest_rescan.py [--tables 400] [--warehouse DIR] [--json]
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scan_scale  # noqa: E402 - the sibling benchmark builds the tables

LIB = Path(__file__).resolve().parent.parent / ".cache" / "interop" / "iceberg-rest" / "lib"
NAMESPACE = "bench"
GOAL = 0.2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(root: Path) -> tuple[subprocess.Popen, str]:
    if not any(LIB.glob("iceberg-open-api-*.jar")):
        raise SystemExit(f"no Iceberg REST server in {LIB}: run make provision")
    port = free_port()
    env = {**os.environ, "CATALOG_REST_PORT": str(port), "CATALOG_WAREHOUSE": (root / "rest-warehouse").as_uri(),
           "CATALOG_URI": f"jdbc:sqlite:file:{root / 'rest-catalog.db'}"}
    log = open(root / "rest-server.log", "wb")  # noqa: SIM115 - the server's output for its whole life
    process = subprocess.Popen(["java", "-Xmx512m", "-XX:+UseSerialGC", "-cp", f"{LIB}/*",
                                "org.apache.iceberg.rest.RESTCatalogServer"], stdout=log, stderr=log, env=env)
    uri = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{uri}/v1/config", timeout=1):
                return process, uri
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"the REST server did not start: see {root / 'rest-server.log'}")


def with_server_cpu(pid: int, uri: str, config: str) -> dict:
    """:func:`run`'s figures, with the server's CPU seconds during the run."""
    before = server_cpu(pid)
    return {**run(uri, config), "server_cpu_s": server_cpu(pid) - before}


def server_cpu(pid: int) -> float:
    """The server process's CPU seconds so far (user + system, from ``/proc``): what each run cost it."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def register(uri: str, warehouse: Path) -> int:
    """Register every table of the SQL warehouse in the REST catalog under the same name."""
    from pyiceberg.catalog.rest import RestCatalog

    sql, rest = scan_scale.catalog(warehouse), RestCatalog("bench", uri=uri)
    rest.create_namespace_if_not_exists(NAMESPACE)
    tables = sql.list_tables(NAMESPACE)
    for identifier in tables:
        rest.register_table(identifier, sql.load_table(identifier).metadata_location)
    return len(tables)


def measure(uri: str, config: str) -> dict:
    """One run in this process: seconds, and the loadTable answers by status with their body bytes."""
    from pyiceberg.catalog.rest import RestCatalog

    cat = RestCatalog("bench", uri=uri)
    answers: collections.Counter = collections.Counter()
    size: collections.Counter = collections.Counter()

    def count(response, *_args, **_kwargs) -> None:
        if response.request.method == "GET" and "/tables/" in response.request.url:
            answers[response.status_code] += 1
            size[response.status_code] += len(response.content)

    started, cpu = time.monotonic(), time.process_time()
    if config == "plain":
        cat._session.hooks["response"].append(count)
        for identifier in cat.list_tables(NAMESPACE):
            sum(bool(s.summary.get("operation")) for s in cat.load_table(identifier).snapshots())
        unchanged = None
    else:
        unchanged = scan_scale.summary_scan({"type": "rest", "uri": uri}, Path(config.partition("=")[2]),
                                            lambda loaded: loaded._session.hooks["response"].append(count)).unchanged
    return {"seconds": time.monotonic() - started, "cpu_s": time.process_time() - cpu, "answers": {str(k): v for k, v in sorted(answers.items())},
            "bytes": sum(size.values()), "unchanged": unchanged}


def run(uri: str, config: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--measure", f"{uri} {config}"], check=True, capture_output=True,
                         text=True, env=scan_scale.child_env())
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=400)
    parser.add_argument("--warehouse", type=Path, default=Path(tempfile.gettempdir()) / "iceberg-lineage-rest-rescan")
    parser.add_argument("--json", action="store_true", help="also print make bench's row")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure.split(" ", 1))))
        return 0
    warehouse = args.warehouse.resolve()
    scan_scale.build(warehouse, args.tables)
    with tempfile.TemporaryDirectory() as tmp:
        process, uri = start_server(Path(tmp))
        try:
            register(uri, warehouse)
            state = f"rescan={Path(tmp) / 'state.db'}"
            plain, first, again = (with_server_cpu(process.pid, uri, config) for config in ("plain", state, state))
        finally:
            process.terminate()
            process.wait(30)
    assert again["unchanged"] == args.tables, again
    print(f"rescan on Iceberg's REST server (ETags), nothing changed: {args.tables} tables x {scan_scale.COMMITS} "
          f"commits, depth summary, counting sink, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"{'run':<30}{'seconds':>9}{'x plain':>9}{'CPU s':>8}{'server':>8}  loadTable answers (body bytes)")
    for name, r in (("plain PyIceberg loop", plain), ("scan, first (fresh state)", first),
                    ("scan again (same state)", again)):
        print(f"{name:<30}{r['seconds']:>9.2f}{r['seconds'] / plain['seconds']:>9.3f}{r['cpu_s']:>8.2f}"
              f"{r['server_cpu_s']:>8.2f}  {r['answers']} ({r['bytes']:,})")
    if args.json:
        print(json.dumps({"row": f"rescan on REST with ETags, {args.tables:,} tables", "baseline": "plain PyIceberg loop",
                          "ratio": round(again["seconds"] / plain["seconds"], 3), "goal": GOAL,
                          "higher_is_better": False}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

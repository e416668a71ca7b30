"""Latency and memory the REST bridge (``iceberg-lineage proxy``) adds, against SeaweedFS (a real Iceberg REST
catalog over S3, started as ``tests/support/seaweed.py`` does).

Paired requests, one direct to SeaweedFS and one through the proxy, in alternating order (direct first, then proxy
first), so drift in the machine affects both sides alike:

* ``load``: load-table (``GET .../tables/t20``) of a table with 20 snapshots;
* ``commit``: a one-file, one-row append by PyIceberg's ``RestCatalog`` (the commit ``POST`` alone is timed); each
  client appends to its own pair of tables, which grow alike;
* ``metrics``: a scan report ``POST``ed to the table's ``/metrics`` (the bridge turns it into a scan run).

At 1, 10 and 50 concurrent clients (threads, each with its own keep-alive session). Figures: the distribution of the
paired differences (proxied minus direct: p50, p99); the same for A/A pairs (direct and direct again, in the same
run: the noise floor that the upstream's and the client's own jitter put under every "added" figure); throughput
through the proxy as a fraction of direct (the ratio of the mean latencies: each client waits for its answer); the
request and response body sizes; the proxy's RSS (its processes' ``VmRSS``) after 1,000 and after 10,000 proxied
requests; and CPU per proxied request, of all the proxy's processes (lineage included) and of its serving processes
alone, figures the machine's load barely changes. Targets (2 cores): added p50 <= 1 ms and p99 <= 5 ms at 1 and 10
clients; RSS after 10,000 <= RSS after 1,000 + 20 MB. At 50 clients, client, proxy and upstream share the two cores:
figures only.

    .venv/bin/python benchmarks/proxy_latency.py [--scale 1.0] [--workers 1]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root: tests.support

from tests.support.lineage_server import LineageServer  # noqa: E402
from tests.support.proxy import start_proxy  # noqa: E402
from tests.support.processes import stop_process_group  # noqa: E402
from tests.support.seaweed import ACCESS_KEY, SECRET_KEY, WAREHOUSE, start_seaweed  # noqa: E402

CLIENTS = (1, 10, 50)
#: pairs per client, per request kind and client count (scaled by --scale)
PAIRS = {"load": {1: 400, 10: 60, 50: 12}, "metrics": {1: 400, 10: 60, 50: 12}, "commit": {1: 40, 10: 6, 50: 2}}
P50_TARGET_MS, P99_TARGET_MS, RSS_TARGET_MB = 1.0, 5.0, 20.0
TABLE_PATH = f"/v1/{WAREHOUSE}/namespaces/bench/tables/t20"
#: the two sides of a pair: direct and proxied; or, for the A/A baseline, two direct ones (each client's commits go
#: to a table per side, so the A/A pair has its own two tables, which grow alike)
VIAS = ("direct", "proxy", "direct2", "direct3")
PROXIED, BASELINE = ("direct", "proxy"), ("direct2", "direct3")


@dataclass
class Counter:
    """Proxied requests so far, and the proxy's RSS when the count first reached each mark."""

    rss: Callable[[], float]
    marks: tuple[int, ...] = (1000, 10000)
    count: int = 0
    at: dict[int, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self) -> None:
        with self.lock:
            self.count += 1
            mark = next((m for m in self.marks if m == self.count), None)
        if mark is not None:
            self.at[mark] = self.rss()


def token(uri: str) -> str:
    import requests

    form = {"grant_type": "client_credentials", "client_id": ACCESS_KEY, "client_secret": SECRET_KEY}
    return requests.post(f"{uri}/v1/oauth/tokens", data=form, timeout=10).json()["access_token"]


def rss_mb(pids: Callable[[], list[int]]) -> float:
    total = 0
    for pid in pids():
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


def cpu_s(pids: Callable[[], list[int]]) -> float:
    """User and system CPU seconds of the proxy's processes so far (a figure the machine's load barely changes)."""
    ticks = 0
    for pid in pids():
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def serving(bench: "Bench") -> list[int]:
    """The serving processes (the proxy's process, the lineage process, forks them)."""
    return [pid for pid in bench.proxy.processes() if pid != bench.proxy.process.pid]


def settled_cpu_s(pids: Callable[[], list[int]], timeout_s: float = 30.0) -> float:
    """:func:`cpu_s` once the proxy is idle (its emitter has built and sent the block's events: they are part of
    the block's cost)."""
    deadline, last = time.monotonic() + timeout_s, cpu_s(pids)
    while time.monotonic() < deadline:
        time.sleep(0.3)
        now = cpu_s(pids)
        if now - last < 0.02:
            return now
        last = now
    return last


class Client:
    """One client's sessions (direct and proxied) and its two commit tables."""

    def __init__(self, index: int, bench: "Bench") -> None:
        import requests

        self.bench = bench
        self.sessions = {via: requests.Session() for via in VIAS}
        for session in self.sessions.values():
            session.headers["Authorization"] = f"Bearer {bench.token}"
        self.tables: dict[str, object] = {}
        #: the last commit POST per side: (seconds, request bytes, response bytes)
        self.commits: dict[str, tuple[float, int, int]] = {}

    def base(self, via: str) -> str:
        return self.bench.proxy.uri if via == "proxy" else self.bench.seaweed.uri

    def load(self, via: str) -> tuple[float, int, int]:
        start = time.perf_counter()
        answer = self.sessions[via].get(self.base(via) + TABLE_PATH, timeout=60)
        took = time.perf_counter() - start
        return _ok(answer, took), 0, len(answer.content)

    def metrics(self, via: str) -> tuple[float, int, int]:
        start = time.perf_counter()
        answer = self.sessions[via].post(self.base(via) + TABLE_PATH + "/metrics", data=self.bench.report,
                                         headers={"Content-Type": "application/json"}, timeout=60)
        took = time.perf_counter() - start
        return _ok(answer, took), len(self.bench.report), len(answer.content)

    def commit(self, via: str) -> tuple[float, int, int]:
        """One append; only its commit POST is timed (its data and manifest files go to S3 directly both ways)."""
        self.tables[via].append(self.bench.row)  # type: ignore[attr-defined]
        return self.commits.pop(via)


def _ok(answer, took: float) -> float:
    if answer.status_code >= 300:
        raise RuntimeError(f"{answer.request.method} {answer.request.path_url}: HTTP {answer.status_code}")
    return took


class Bench:
    def __init__(self, root: Path, workers: int = 1) -> None:
        import pyarrow as pa

        self.process, self.seaweed = start_seaweed(root / "seaweed")
        self.lineage = LineageServer()
        props = [a for k, v in {"credential": self.seaweed.credential, "warehouse": f"s3://{WAREHOUSE}/",
                                **self.seaweed.s3_properties()}.items() for a in ("--io-property", f"{k}={v}")]
        self.proxy = start_proxy(self.seaweed.uri, root / "proxy", self.lineage.url, *props, "--workers", str(workers))
        self.token = token(self.seaweed.uri)
        self.row = pa.table({"id": pa.array([1], pa.int64()), "v": pa.array(["x"])})
        direct = self.seaweed.catalog("bench-direct")
        direct.create_namespace_if_not_exists("bench")
        t20 = direct.create_table("bench.t20", self.row.schema)
        for _ in range(20):
            t20.append(self.row)
        sid = t20.refresh().metadata.current_snapshot_id
        self.report = json.dumps(_scan_report(sid)).encode()
        self.counter = Counter(lambda: rss_mb(self.proxy.processes))
        self.clients: list[Client] = []

    def client(self, index: int) -> Client:
        """Client ``index``, with its commit tables (made on first use)."""
        while len(self.clients) <= index:
            self.clients.append(self._new_client(len(self.clients)))
        return self.clients[index]

    def _new_client(self, index: int) -> Client:
        client = Client(index, self)
        for via in VIAS:
            catalog = self.seaweed.catalog(f"c{index}{via}", uri=client.base(via))
            client.tables[via] = catalog.create_table(f"bench.c{index}_{via}", self.row.schema)
            _time_commits(catalog, client, via)
        return client

    def stop(self) -> None:
        self.proxy.stop()
        self.lineage.stop()
        stop_process_group(self.process)


def _time_commits(catalog: object, client: Client, via: str) -> None:
    """Time the catalog's table-commit POSTs (request sent to body read) and keep their body sizes."""
    session = catalog._session  # type: ignore[attr-defined]
    send = session.send

    def timed_send(request, **kwargs):
        start = time.perf_counter()
        response = send(request, **kwargs)
        took = time.perf_counter() - start
        if request.method == "POST" and "/tables/" in request.path_url and not request.path_url.endswith("metrics"):
            client.commits[via] = (_ok(response, took), len(request.body or b""), len(response.content))
        return response

    session.send = timed_send


def _scan_report(snapshot_id: int) -> dict:
    return {"report-type": "scan-report", "table-name": "bench.bench.t20", "snapshot-id": snapshot_id, "filter": True,
            "schema-id": 0, "projected-field-ids": [1, 2], "projected-field-names": ["id", "v"],
            "metrics": {"total-planning-duration": {"count": 1, "time-unit": "nanoseconds", "total-duration": 1_500_000},
                        "result-data-files": {"unit": "count", "value": 20},
                        "total-file-size-in-bytes": {"unit": "bytes", "value": 20 * 700}},
            "metadata": {"engine-name": "benchmark", "iceberg-version": "n/a"}}


def pairs(bench: Bench, kind: str, clients: int, count: int,
          sides: tuple[str, str] = PROXIED) -> tuple[list[tuple[float, float]], tuple[int, int]]:
    """``count`` pairs per client on ``clients`` threads: (first side, second side) seconds, and the second side's
    body sizes; ``sides=BASELINE`` is the A/A baseline: the paired differences of two direct requests, the noise
    floor that the upstream's and the client's own jitter put under every added figure."""
    first, other = sides
    sizes: tuple[int, int] = (0, 0)

    def work(index: int) -> list[tuple[float, float]]:
        nonlocal sizes
        client = bench.client(index)
        send = getattr(client, kind)
        out = []
        for i in range(count):
            order = (first, other) if (i + index) % 2 == 0 else (other, first)
            got = {}
            for via in order:
                got[via] = send(via)
                if via == "proxy":
                    bench.counter.add()
            sizes = got[other][1:]
            out.append((got[first][0], got[other][0]))
        return out

    for index in range(clients):  # tables first, outside the timed part
        bench.client(index)
    with ThreadPoolExecutor(clients) as pool:
        results = [p for part in pool.map(work, range(clients)) for p in part]
    return results, sizes


def _proxied_loads(bench: Bench, index: int, count: int) -> None:
    for _ in range(count):
        bench.client(index).load("proxy")
        bench.counter.add()


def summarize(kind: str, clients: int, samples: list[tuple[float, float]], sizes: tuple[int, int]) -> dict:
    added = [(p - d) * 1000 for d, p in samples]
    q = statistics.quantiles(added, n=100) if len(added) >= 2 else [added[0]] * 99
    direct, proxied = statistics.fmean(d for d, _ in samples), statistics.fmean(p for _, p in samples)
    return {"kind": kind, "clients": clients, "pairs": len(samples), "direct_p50_ms": statistics.median(
        d for d, _ in samples) * 1000, "added_p50_ms": statistics.median(added), "added_p99_ms": q[98],
        "throughput": direct / proxied, "request_bytes": sizes[0], "response_bytes": sizes[1]}


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def report(rows: list[dict], counter: Counter) -> None:
    print(f"{'clients':>7} {'request':>8} {'pairs':>6} {'direct p50':>11} {'added p50':>10} {'added p99':>10} "
          f"{'A/A p50':>8} {'A/A p99':>8} {'throughput':>10} {'req bytes':>10} {'resp bytes':>10} {'proxy CPU':>10} "
          f"{'serving':>8}")
    for r in rows:
        print(f"{r['clients']:>7} {r['kind']:>8} {r['pairs']:>6} {r['direct_p50_ms']:>9.2f}ms {r['added_p50_ms']:>8.2f}ms "
              f"{r['added_p99_ms']:>8.2f}ms {r['aa_p50_ms']:>6.2f}ms {r['aa_p99_ms']:>6.2f}ms {r['throughput']:>9.1%} "
              f"{r['request_bytes']:>10} {r['response_bytes']:>10} {r['proxy_cpu_ms']:>8.2f}ms "
              f"{r['serving_cpu_ms']:>6.2f}ms")
    print("\ntargets (2 cores):")
    for r in rows:
        if r["clients"] in (1, 10):
            print(f"  {r['clients']:>2} clients {r['kind']:>7}: added p50 {r['added_p50_ms']:.2f} ms <= "
                  f"{P50_TARGET_MS} ms {verdict(r['added_p50_ms'] <= P50_TARGET_MS)}; added p99 "
                  f"{r['added_p99_ms']:.2f} ms <= {P99_TARGET_MS} ms {verdict(r['added_p99_ms'] <= P99_TARGET_MS)}")
    first, last = counter.at.get(1000), counter.at.get(10000)
    if first is not None and last is not None:
        print(f"  RSS after 1,000 proxied requests {first:.1f} MB, after 10,000 {last:.1f} MB (+{last - first:.1f} MB) "
              f"<= +{RSS_TARGET_MB:.0f} MB {verdict(last - first <= RSS_TARGET_MB)}")
    print("  50 clients: figures only (client, proxy and upstream share the two cores)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the number of pairs")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--workers", type=int, default=1, help="the proxy's serving processes (--workers)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(Path(tmp), args.workers)
        try:
            for kind in PAIRS:  # warm-up, untimed
                pairs(bench, kind, 1, 10)
            rows = []
            for clients in CLIENTS:
                for kind, per in PAIRS.items():
                    count = max(1, round(per[clients] * args.scale))
                    before, serving_before = cpu_s(bench.proxy.processes), cpu_s(lambda: serving(bench))
                    samples, sizes = pairs(bench, kind, clients, count)
                    row = summarize(kind, clients, samples, sizes)
                    row["proxy_cpu_ms"] = (settled_cpu_s(bench.proxy.processes) - before) * 1000 / len(samples)
                    row["serving_cpu_ms"] = (cpu_s(lambda: serving(bench)) - serving_before) * 1000 / len(samples)
                    baseline = summarize(kind, clients, *pairs(bench, kind, clients, count, BASELINE))
                    row["aa_p50_ms"], row["aa_p99_ms"] = baseline["added_p50_ms"], baseline["added_p99_ms"]
                    rows.append(row)
            while bench.counter.count < 10000:  # proxied loads up to the second RSS mark
                with ThreadPoolExecutor(10) as pool:
                    list(pool.map(lambda i: _proxied_loads(bench, i, 100), range(10)))
            report(rows, bench.counter)
            if args.json:
                args.json.write_text(json.dumps({"rows": rows, "rss_mb": bench.counter.at}, indent=1))
        finally:
            bench.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

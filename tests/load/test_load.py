"""CI-sized load: concurrent writers under the hook, and a scan of 200 tables, each delivering over HTTP to a
server that fails 10 % of requests. Nothing is lost; full sizes are in benchmarks/load.py."""
from __future__ import annotations

from tests.support.faults import every_tenth_fails
from tests.support.load import hook_load, scan_load


def test_hook_under_four_writers(tmp_path):
    result = hook_load(tmp_path, threads=4, commits=20)
    assert (result.snapshots, result.delivered, result.wrong_run_ids) == (80, 80, 0), result
    assert result.failed_requests >= result.requests // 10 > 0  # the faults did happen
    assert result.events_accepted >= 84  # 80 commits and 4 CREATEs, retried ones once more at most


def test_scan_of_200_tables(tmp_path):
    result = scan_load(tmp_path / "scan", tables=200)
    assert (result.snapshots, result.delivered, result.second_scan_emitted) == (200, 200, 0), result
    # each snapshot's run once, START and COMPLETE: a refused request is retried, not duplicated
    assert result.events_accepted == 2 * 200
    # the server refuses the 3rd, 13th, 23rd... request (with START events there are more requests)
    assert result.failed_requests == sum(map(every_tenth_fails, range(result.requests))) > 0

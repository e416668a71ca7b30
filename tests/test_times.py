"""``--since``: one parser for ``scan`` and ``jobs`` (and ``jobs(since=...)``): an age before now or an ISO time."""
from __future__ import annotations

import calendar
import datetime as dt

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli import main
from iceberg_lineage.times import epoch_ms, parse_since

NOW = dt.datetime(2026, 3, 10, 12, 0, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("text, expected", [
    ("7d", dt.datetime(2026, 3, 3, 12, 0, tzinfo=dt.timezone.utc)),
    ("12h", dt.datetime(2026, 3, 10, 0, 0, tzinfo=dt.timezone.utc)),
    (" 90s ", dt.datetime(2026, 3, 10, 11, 58, 30, tzinfo=dt.timezone.utc)),
    ("2w", dt.datetime(2026, 2, 24, 12, 0, tzinfo=dt.timezone.utc)),
    ("2026-03-08", dt.datetime(2026, 3, 8, tzinfo=dt.timezone.utc)),  # no offset: UTC
    ("2026-03-08T01:02:03Z", dt.datetime(2026, 3, 8, 1, 2, 3, tzinfo=dt.timezone.utc)),
    ("2026-03-08T01:00:00+02:00", dt.datetime(2026, 3, 7, 23, 0, tzinfo=dt.timezone.utc)),
])
def test_ages_and_iso_times(text, expected):
    assert parse_since(text, now=NOW) == expected


def test_epoch_milliseconds_match_the_calendar():
    moment = parse_since("2026-03-08T01:02:03.5Z")
    assert epoch_ms(moment) == calendar.timegm((2026, 3, 8, 1, 2, 3)) * 1000 + 500
    assert epoch_ms(parse_since(None)) is None


@pytest.mark.parametrize("command", ["scan", "jobs"])
def test_both_commands_refuse_the_same_bad_value_with_exit_2(command):
    result = CliRunner().invoke(main, [command, "--since", "last week"])
    assert result.exit_code == 2
    assert "expected a duration such as 7d, 12h, 30m or an ISO 8601 time, got 'last week'" in result.stderr

"""``eventTime`` to milliseconds: the table lookups for OpenLineage's own format (``2026-03-05T12:34:56.789Z``) answer
what the standard library's parse answers, and every other text (another offset, more digits, a second 60, another
case, digits that are not ASCII) is parsed, even in an hour the tables have learnt."""
from __future__ import annotations

import datetime as dt
import json
import random

import pytest

from iceberg_lineage.jobs import aggregate, eventtime, jobs_of_events
from iceberg_lineage.jobs.eventtime import BadEvent, event_ms, parsed_ms
from tests.jobs.eventlog import run_event

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
MS = dt.timedelta(milliseconds=1)


@pytest.fixture(autouse=True)
def no_hours_learnt():
    eventtime._hours.clear()
    yield
    eventtime._hours.clear()


def exact_ms(moment: dt.datetime) -> int:
    """Milliseconds since the epoch in integer arithmetic (no float timestamp)."""
    return (moment - EPOCH) // MS


def canonical(moment: dt.datetime) -> str:
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
            f"{moment.second:02d}.{moment.microsecond // 1000:03d}Z")


def moments(n: int, seed: int = 3) -> list[dt.datetime]:
    """Random instants of years 1..9999 at millisecond precision, the calendar's ends and a leap day's edges."""
    rng = random.Random(seed)
    low, high = exact_ms(dt.datetime.min.replace(tzinfo=dt.timezone.utc)), exact_ms(
        dt.datetime.max.replace(tzinfo=dt.timezone.utc))
    picked = [EPOCH + rng.randrange(low, high + 1) * MS for _ in range(n)]
    edges = [dt.datetime.min, dt.datetime.max.replace(microsecond=999000), dt.datetime(2024, 2, 29, 23, 59, 59, 999000),
             dt.datetime(2024, 3, 1), dt.datetime(1969, 12, 31, 23, 59, 59, 999000), dt.datetime(1970, 1, 1)]
    return picked + [e.replace(tzinfo=dt.timezone.utc) for e in edges]


def test_the_one_format_is_exact_whether_its_hour_is_learnt_or_not():
    for moment in moments(3000):
        text = canonical(moment)
        assert event_ms(text) == exact_ms(moment) == parsed_ms(text), text  # learns the hour
        assert text[:14] in eventtime._hours
        later = moment.replace(minute=59 - moment.minute, second=59 - moment.second, microsecond=7000)
        assert event_ms(canonical(later)) == exact_ms(later)  # from the tables alone


@pytest.mark.parametrize("text, expected", [
    ("2026-03-05T12:34:56.789+00:00", dt.datetime(2026, 3, 5, 12, 34, 56, 789000)),
    ("2026-03-05T12:34:56.789+02:00", dt.datetime(2026, 3, 5, 10, 34, 56, 789000)),
    ("2026-03-05T12:34:56.789-05:30", dt.datetime(2026, 3, 5, 18, 4, 56, 789000)),
    ("2026-03-05T12:34:56.789", dt.datetime(2026, 3, 5, 12, 34, 56, 789000)),  # no offset: UTC
    ("2026-03-05T12:34:56Z", dt.datetime(2026, 3, 5, 12, 34, 56)),
    ("2026-03-05T12:34:56.78Z", dt.datetime(2026, 3, 5, 12, 34, 56, 780000)),
    ("2026-03-05T12:34:56.7891Z", dt.datetime(2026, 3, 5, 12, 34, 56, 789000)),  # rounded to the millisecond
    ("2026-03-05T12:34:56.7895Z", dt.datetime(2026, 3, 5, 12, 34, 56, 790000)),
    ("2026-03-05T12:34:56.789123456Z", dt.datetime(2026, 3, 5, 12, 34, 56, 789000)),
])
def test_another_format_in_a_learnt_hour_is_parsed(text, expected):
    event_ms("2026-03-05T12:00:00.000Z")
    assert "2026-03-05T12:" in eventtime._hours
    assert event_ms(text) == parsed_ms(text) == exact_ms(expected.replace(tzinfo=dt.timezone.utc))


@pytest.mark.parametrize("text", [
    "2026-03-05T12:34:60.000Z",  # a leap second
    "2026-03-05T12:60:00.000Z",
    "2026-03-05T12:34:56.789z",
    "2026-03-05T12:34:5\u0661.789Z",  # an Arabic-Indic digit
    "2026-03-05T12:34:56.78\u0669Z",
    "2026-03-05T12:34:56,789Z",
    "2026-03-05 12:34:56.789Z",
    "2026-03-05T12:34:56.789Z ",
])
def test_text_almost_of_the_format_is_what_the_parse_says(text):
    event_ms("2026-03-05T12:00:00.000Z")
    try:
        expected = parsed_ms(text)
    except BadEvent as exc:
        with pytest.raises(BadEvent, match=str(exc).replace("(", r"\(").replace(")", r"\)")):
            event_ms(text)
    else:
        assert event_ms(text) == expected
    assert set(eventtime._hours) == {"2026-03-05T12:"}


@pytest.mark.parametrize("text", ["2026-03-05T24:00:00.000Z", "\u0662026-03-05T12:00:00.000Z",
                                  "2026-02-30T12:00:00.000Z", "2026-03-05T2\u0663:00:00.000Z"])
def test_an_hour_out_of_shape_is_never_learnt(text):
    with pytest.raises(BadEvent, match="is not ISO 8601"):
        event_ms(text)
    assert not eventtime._hours


def test_a_time_that_is_no_string_is_refused_by_both():
    for value in (None, 12345, ["2026-03-05T12:00:00.000Z"]):
        with pytest.raises(BadEvent, match="without an eventTime"):
            event_ms(value)


def test_the_hours_learnt_stay_bounded(monkeypatch):
    monkeypatch.setattr(eventtime, "MAX_HOURS", 50)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    for hour in range(120):
        moment = start + dt.timedelta(hours=hour, seconds=hour, milliseconds=hour)
        assert event_ms(canonical(moment)) == exact_ms(moment)
        assert len(eventtime._hours) <= 50


def test_a_log_of_mixed_formats_gives_the_report_of_the_parse_alone(monkeypatch):
    rng = random.Random(5)
    zones = [dt.timezone.utc, dt.timezone(dt.timedelta(hours=2)), dt.timezone(dt.timedelta(hours=-7, minutes=-30))]
    lines = []
    for n in range(600):
        start = EPOCH + dt.timedelta(days=20_000, milliseconds=rng.randrange(10**9))
        for kind, moment in (("START", start), ("COMPLETE", start + rng.randrange(1, 10**7) * MS)):
            shape = rng.randrange(4)
            text = (canonical(moment) if shape < 2 else
                    moment.astimezone(rng.choice(zones)).isoformat(timespec="milliseconds") if shape == 2 else
                    moment.isoformat().replace("+00:00", "Z"))
            lines.append(json.dumps(dict(run_event(kind, f"r{n}", f"job{n % 7}", 0), eventTime=text)))
    rng.shuffle(lines)
    report = jobs_of_events(lines, since="2024-10-09T00:00:00.0004Z")
    monkeypatch.setattr(aggregate, "event_ms", parsed_ms)
    eventtime._hours.clear()
    parsed = jobs_of_events(lines, since="2024-10-09T00:00:00.0004Z")
    assert not eventtime._hours  # the second reading never used the tables
    assert report.jobs == parsed.jobs and report.timeline == parsed.timeline
    assert (report.events, report.ignored) == (parsed.events, parsed.ignored) and 0 < report.ignored < len(lines)
    assert sum(j.timed_runs for j in report.jobs) > 100

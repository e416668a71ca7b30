"""The README is a front page (issue 29): short, with what a fresh clone needs near its top, a quickstart on your own
catalog, one real example event, and links that lead somewhere."""
from __future__ import annotations

import json
import re

from tests.support.engines import REPO

README = (REPO / "README.md").read_text()
LINES = README.splitlines()


def test_at_most_300_lines():
    assert len(LINES) <= 300, len(LINES)


def test_the_clone_commands_stay_near_the_top_and_ci_runs_make_test():
    top = "\n".join(LINES[:30])
    assert re.search(r"^make run\b", top, re.M) and re.search(r"^make test\b", top, re.M)
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert "make test" in [line.strip() for line in ci if not line.startswith("#")]


def test_install_and_a_three_step_quickstart_on_your_own_catalog():
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert "not on PyPI yet" in install and "pip install ." in install and "pipx install ." in install
    quickstart = README.split("## Quickstart on your own catalog", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^(\d)\. \*\*(.+?)\*\*", quickstart, re.M)
    assert [n for n, _ in steps] == ["1", "2", "3"]
    assert "catalog" in steps[0][1].lower() and "OPENLINEAGE_URL" in steps[1][1]
    for command in ("export OPENLINEAGE_URL=", "iceberg-lineage scan", "iceberg-lineage run -- python etl.py"):
        assert command in quickstart, command


def test_the_example_event_is_json_of_a_run_with_inputs_and_outputs():
    section = README.split("## An example event", 1)[1].split("\n## ", 1)[0]
    event = json.loads(section.split("```json", 1)[1].split("```", 1)[0])
    assert event["eventType"] == "COMPLETE" and event["inputs"] and event["outputs"]


def test_every_consumer_has_a_line_and_the_page_is_linked():
    section = README.split("## What each consumer shows", 1)[1].split("\n## ", 1)[0]
    for consumer in ("Marquez", "DataHub", "OpenMetadata", "DataZone", "Dataplex", "Atlan", "Datadog"):
        assert f"**{consumer}**" in section or f"**Amazon {consumer}**" in section \
            or f"**Google {consumer}**" in section, consumer
    assert "(docs/consumers.md)" in section


def test_every_relative_link_leads_to_a_file():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if "://" not in link]
    assert "docs/getting-started.md" in local and "docs/cli.md" in local
    for link in local:
        assert (REPO / link).is_file(), link

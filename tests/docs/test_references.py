"""The CLI reference is generated from the click commands (issue 29), so a flag cannot go undocumented: the
checked-in docs/cli.md must equal a fresh generation, and every option of every command must be in it. Shell
completion, through click, is documented with the variable that really works."""
from __future__ import annotations

import os
import subprocess
import sys

import click

from iceberg_lineage.cli import main
from iceberg_lineage.cli.reference import REFERENCE_PATH, reference_markdown
from tests.support.engines import REPO

CLI_DOC = (REPO / REFERENCE_PATH).read_text()
ENTRY = "from iceberg_lineage.cli import main; main(prog_name='iceberg-lineage')"


def test_the_checked_in_reference_is_a_fresh_generation():
    assert CLI_DOC == reference_markdown(), "run: python -m iceberg_lineage.cli.reference"


def test_every_command_and_every_option_is_documented():
    """Checked against click's own tree, not the generator: each command's section names each of its flags."""
    ctx = click.Context(main, info_name="iceberg-lineage")
    names = main.list_commands(ctx)
    assert {"scan", "stats", "events", "run", "proxy", "check", "jobs", "replay", "schema", "config"} <= set(names)
    for name in names:
        section = CLI_DOC.split(f"## `iceberg-lineage {name}`\n", 1)[1].split("\n## ", 1)[0]
        for param in main.get_command(ctx, name).params:
            for flag in (*param.opts, *param.secondary_opts):
                if flag.startswith("-"):
                    assert f"`{flag}" in section or f", {flag}" in section or f"/{flag}" in section, (name, flag)
    assert "`-q, --quiet`" in CLI_DOC.split("## `iceberg-lineage scan`", 1)[1]


def test_the_module_writes_the_file(tmp_path):
    (tmp_path / "docs").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-m", "iceberg_lineage.cli.reference"], cwd=tmp_path, env=env, check=True,
                   timeout=120)
    assert (tmp_path / REFERENCE_PATH).read_text() == CLI_DOC


def complete(env: dict[str, str]) -> str:
    return subprocess.run([sys.executable, "-c", ENTRY], env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=120, check=True).stdout


def test_shell_completion_is_documented_with_the_variable_click_reads():
    for page in (CLI_DOC, (REPO / "docs" / "getting-started.md").read_text()):
        assert 'eval "$(_ICEBERG_LINEAGE_COMPLETE=bash_source iceberg-lineage)"' in page
    for shell in ("zsh", "fish"):
        assert f"_ICEBERG_LINEAGE_COMPLETE={shell}_source iceberg-lineage" in CLI_DOC
    script = complete({"_ICEBERG_LINEAGE_COMPLETE": "bash_source"})
    assert "_iceberg_lineage_completion" in script and "complete " in script
    # and the script's callback completes: commands, then a command's options
    words = complete({"_ICEBERG_LINEAGE_COMPLETE": "bash_complete", "COMP_WORDS": "iceberg-lineage sc",
                      "COMP_CWORD": "1"})
    assert words.splitlines() == ["plain,scan", "plain,schema"]
    flags = complete({"_ICEBERG_LINEAGE_COMPLETE": "bash_complete", "COMP_WORDS": "iceberg-lineage scan --qu",
                      "COMP_CWORD": "2"})
    assert flags.splitlines() == ["plain,--quiet"]

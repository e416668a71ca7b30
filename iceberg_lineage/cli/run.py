"""``iceberg-lineage run [--job-name NAME] -- COMMAND...``: run an unmodified program as one OpenLineage run.

The program's stdin, stdout, stderr and exit code pass through unchanged (a child killed by signal N exits
128 + N). Exit code 2 without running anything: usage or configuration error; 127: the command was not found. When
the command exits 0 and events wait in the spool, one line on stderr says so (the exit code stays 0).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from iceberg_lineage.cli.common import EXIT_USAGE, fail, profile_option

EXIT_NOT_FOUND = 127


@click.command("run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--job-name", metavar="NAME", help="Job name (default: the script's or module's name).")
@profile_option
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run_command(job_name: str | None, profile: str | None, command: tuple[str, ...]) -> None:
    """Run COMMAND with PyIceberg instrumented: START, a RUNNING event per commit and scan, then COMPLETE
    (exit code 0) or FAIL, with every table read as an input and every table written as an output."""
    from iceberg_lineage.errors import ConfigError
    from iceberg_lineage.hook.process import run_process

    if profile:  # the flag beats the environment, in this process and in the child's hooks
        os.environ["ICEBERG_LINEAGE__CONSUMER__PROFILE"] = profile
    try:
        code = run_process(command, job_name=job_name)
    except ConfigError as exc:
        fail(exc, debug=False, code=EXIT_USAGE)
    except OSError as exc:
        fail(exc, debug=False, code=EXIT_NOT_FOUND)
    if code == 0:
        _say_what_waits()
    sys.exit(code)


def _say_what_waits() -> None:
    """One line on stderr when events wait in the spool after the command succeeded: the exit code stays the
    command's, so this line is what tells the user that ``replay`` has work to do."""
    from iceberg_lineage.config import load_settings
    from iceberg_lineage.delivery.spool import SpoolError
    from iceberg_lineage.delivery.spool_listing import list_spool

    path = Path(load_settings().spool.path).expanduser().resolve()
    try:
        waiting = list_spool(path).waiting
    except SpoolError as exc:
        click.echo(f"iceberg-lineage: run: cannot read the spool at {exc.file}: {exc.reason}", err=True)
        return
    if waiting:
        click.echo(f"iceberg-lineage: run: the command succeeded, and {waiting} event(s) wait in the spool at {path} "
                   "(send them with `iceberg-lineage replay`)", err=True)


if __name__ == "__main__":  # pragma: no cover
    run_command()

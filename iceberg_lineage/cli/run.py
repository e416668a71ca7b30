"""``iceberg-lineage run [--job-name NAME] -- COMMAND...``: run an unmodified program as one OpenLineage run.

The program's stdin, stdout, stderr and exit code pass through unchanged (a child killed by signal N exits
128 + N). Exit code 2 without running anything: usage or configuration error; 127: the command was not found.
"""
from __future__ import annotations

import os
import sys

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
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    run_command()

"""``check --rules FILE`` goes through the bounded YAML reader (as the configuration file does, see
tests/lineage/test_config.py): each hostile file is exit 2 and one line naming the file, never a hang, an exhausted
memory or a traceback."""
from __future__ import annotations

import os
import threading

import pytest
from click.testing import CliRunner

from iceberg_lineage.cli.check import check_command
from iceberg_lineage.config.yamlfile import MAX_YAML_BYTES, MAX_YAML_DEPTH

#: A "billion laughs": nine levels of nine aliases, 9**9 strings once walked.
LAUGHS = "\n".join(["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
                   + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)])


def check(rules: str) -> tuple[int, str]:
    result = CliRunner().invoke(check_command, ["--rules", rules, "--metadata", "/nonexistent/metadata.json"])
    return result.exit_code, result.output


def one_line_naming(output: str, path: str) -> str:
    lines = output.strip().splitlines()
    assert len(lines) == 1 and f"file {path}:" in lines[0] and "Traceback" not in output
    return lines[0]


def test_aliases_are_refused_in_tables_and_in_a_setting(tmp_path):
    in_tables = tmp_path / "tables.yml"
    in_tables.write_text(LAUGHS + "\nchecks:\n  - tables: *i\n    rules: {snapshots: {max: 3}}\n")
    in_value = tmp_path / "value.yml"
    in_value.write_text(LAUGHS + "\nchecks:\n  - tables: 'x.*'\n    rules: {null_fraction: {columns: *i}}\n")
    for path in (in_tables, in_value):
        code, output = check(str(path))
        assert code == 2
        assert "anchors and aliases are not accepted (line 1, column 4)" in one_line_naming(output, str(path))


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "rules.fifo"
    os.mkfifo(fifo)
    done: list[tuple[int, str]] = []
    worker = threading.Thread(target=lambda: done.append(check(str(fifo))), daemon=True)
    worker.start()
    worker.join(60)  # a hang shows as an empty ``done``, not as a timing threshold
    assert done, "check --rules FIFO hung"
    assert done[0][0] == 2 and one_line_naming(done[0][1], str(fifo)).endswith("not a regular file")


def test_dev_zero_is_refused():
    code, output = check("/dev/zero")
    assert code == 2 and one_line_naming(output, "/dev/zero").endswith("not a regular file")


def test_a_file_over_the_cap_is_refused(tmp_path):
    big = tmp_path / "big.yml"
    big.write_text("checks: []\n" + "#" * MAX_YAML_BYTES + "\n")
    code, output = check(str(big))
    assert code == 2 and one_line_naming(output, str(big)).endswith(f"larger than {MAX_YAML_BYTES // 1024} KiB")


@pytest.mark.parametrize("value", [".inf", "-.Inf", ".nan", "1.0e+400"])
def test_numbers_that_are_not_finite_are_refused(tmp_path, value):
    rules = tmp_path / "inf.yml"
    rules.write_text(f"checks:\n  - tables: 'x.*'\n    rules: {{small_files: {{size: {value}}}}}\n")
    code, output = check(str(rules))
    assert code == 2 and one_line_naming(output, str(rules)).endswith("a number is not finite (.inf or .nan)")


def test_a_huge_size_written_as_digits_is_refused(tmp_path):
    rules = tmp_path / "digits.yml"
    rules.write_text(f"checks:\n  - tables: 'x.*'\n    rules: {{small_files: {{size: '{'9' * 400}', max_ratio: 0.5}}}}\n")
    code, output = check(str(rules))
    assert code == 2 and one_line_naming(output, str(rules)).endswith("not a finite size")


def test_deep_nesting_is_refused_without_recursion_error(tmp_path):
    deep = tmp_path / "deep.yml"
    deep.write_text("checks: " + "[" * 100 + "]" * 100 + "\n")
    code, output = check(str(deep))
    assert code == 2
    assert one_line_naming(output, str(deep)).endswith(f"YAML nested deeper than {MAX_YAML_DEPTH} levels (line 1)")
    for text in ("[" * 50_000 + "]" * 50_000, "- " * 50_000 + "x"):
        deep.write_text("checks: " + text + "\n")  # flow style (libyaml stops it first), then block style
        code, output = check(str(deep))
        line = one_line_naming(output, str(deep))
        assert code == 2 and ("nested deeper" in line or "not valid YAML at line 1" in line), line


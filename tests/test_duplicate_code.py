"""No copy-paste twins: pylint's ``duplicate-code`` check (R0801) with ``min-similarity-lines=6`` over both packages
finds at most :data:`MAX_BLOCKS` blocks. Imports, docstrings, comments and signatures are left out, and pylint 4
reports a block only when it is longer than that minimum (7 lines: tested below)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("iceberg_lineage", "scan_reporters")
MIN_LINES = 6
#: The most blocks tolerated (issue 26's bound); a new repeat should be folded, not counted.
MAX_BLOCKS = 3


def duplicate_blocks(paths: list[Path], cwd: Path = ROOT) -> list[str]:
    """Each block pylint reports: the places that share it, then the shared lines."""
    done = subprocess.run(
        [sys.executable, "-m", "pylint", "--disable=all", "--enable=duplicate-code",
         f"--min-similarity-lines={MIN_LINES}", "--jobs=1", "--score=n", "--persistent=n", *map(str, paths)],
        cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode & (1 | 32) == 0, done.stderr or done.stdout  # 1: fatal, 32: usage error
    return [m.group(0).strip() for m in re.finditer(r"R0801: Similar lines in .*?\(duplicate-code\)", done.stdout,
                                                     re.S)]


def test_the_packages_repeat_at_most_three_blocks():
    blocks = duplicate_blocks([ROOT / name for name in PACKAGES])
    assert len(blocks) <= MAX_BLOCKS, "\n\n".join(blocks)


def test_the_check_sees_a_copied_block(tmp_path):
    """The check itself can fail: seven lines copied into another module are one block."""
    body = "".join(f"    value = value * {n} + {n}\n" for n in range(7))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text(f"def f(value):\n{body}    return value\n")
    (tmp_path / "pkg" / "b.py").write_text(f"def g(value):\n{body}    return value + 1\n")
    blocks = duplicate_blocks([tmp_path / "pkg"], cwd=tmp_path)
    assert len(blocks) == 1 and "==pkg.a:[1:8]" in blocks[0] and "==pkg.b:[1:8]" in blocks[0], blocks

"""No module of the package grows past what one person reads in one sitting."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "domi_desktop"
MAX_LINES = 500


def test_no_module_is_over_500_lines() -> None:
    sizes = {
        str(path.relative_to(PACKAGE.parent)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert len(sizes) > 100, "the package's modules were not found"
    over = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert not over, f"over {MAX_LINES} lines: {over}"

"""The README's shift table is the one the shifts' declarations give."""

from __future__ import annotations

from dogood.shifts.describe import REGENERATE, TABLE_END, TABLE_START, readme_path, readme_with_table


def test_readme_shift_table_is_generated_from_the_declarations():
    text = readme_path().read_text(encoding="utf-8")
    assert TABLE_START in text and TABLE_END in text
    assert readme_with_table(text) == text, f"the README's shift table is out of date: run `{REGENERATE}`"


def test_write_readme_puts_the_table_between_the_markers(tmp_path):
    from dogood.shifts.describe import main, shift_table_markdown

    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{TABLE_START}\nold table\n{TABLE_END}\n\nafter\n", encoding="utf-8")
    assert main(["--write-readme", "--readme", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == f"# x\n\n{TABLE_START}\n{shift_table_markdown()}{TABLE_END}\n\nafter\n"

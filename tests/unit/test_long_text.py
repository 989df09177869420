"""A message's text bounded before it is laid out (the window shows its first part and a
*Show all* link; what is sent is always the whole)."""

from __future__ import annotations

from desktop_app.ui.conversation.long_text import (
    SHOW_ALL,
    SHOWN_CHARS,
    TABLE_KEEP,
    in_pieces,
    shown_markdown,
    shown_plain,
)


def table(rows: int) -> str:
    return "| # | item |\n|---|---|\n" + "".join(f"| {i} | row {i} |\n" for i in range(rows))


def test_short_text_and_short_tables_are_shown_as_written() -> None:
    text = f"Intro\n\n{table(100)}\nAfter."
    assert shown_markdown(text).text == text
    assert shown_markdown(text).whole


def test_a_long_table_shows_its_first_rows_and_what_follows_it() -> None:
    shown = shown_markdown(f"Intro\n\n{table(2000)}\nAfter.")
    assert not shown.whole
    assert f"| {TABLE_KEEP - 1} | row {TABLE_KEEP - 1} |" in shown.text
    assert f"| {TABLE_KEEP} | row {TABLE_KEEP} |" not in shown.text
    assert f"{2000 - TABLE_KEEP:,} more rows —* [Show all]({SHOW_ALL})" in shown.text
    assert shown.text.endswith("After.")


def test_a_table_inside_code_is_code() -> None:
    text = f"```\n{table(2000)}```\n"
    assert "more rows" not in shown_markdown(text).text


def test_a_long_text_is_cut_near_a_line_end_and_a_cut_code_block_is_closed() -> None:
    code = "Intro\n\n```python\n" + "x = 1\n" * 10_000 + "```\nafter"
    shown = shown_markdown(code)
    assert len(shown.text) < SHOWN_CHARS + 200
    head, note = shown.text.rsplit("\n\n", 1)
    assert head.endswith("x = 1\n```")  # the link is outside the code, so it is a link
    assert note == f"*… {len(code) - len(head) + 4:,} more characters —* [Show all]({SHOW_ALL})"
    line = "y" * 1_000_000
    assert shown_plain(line).text.endswith(f"… {1_000_000 - SHOWN_CHARS:,} more characters")


def test_the_viewer_shows_a_long_line_in_pieces_and_nothing_else_changes() -> None:
    text = "short\n" + "z" * 4_500 + "\n\nend"
    pieces = in_pieces(text)
    assert pieces.split("\n") == ["short", "z" * 2000, "z" * 2000, "z" * 500, "", "end"]

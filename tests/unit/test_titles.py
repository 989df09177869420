"""Chat titles are the first message's plain words, never its Markdown."""

from __future__ import annotations

import pytest

from desktop_app.core.titles import plain_text, title_from


@pytest.mark.parametrize(
    ("message", "title"),
    [
        ("Here is some code: ```python\nprint(1)\n```", "Here is some code:"),
        (
            "Here is some code:\n```python\nprint(1)\n```\nWhy does it fail?",
            "Here is some code: Why does it fail?",
        ),
        ("```python\nprint(1)\n```", "Python code"),
        ("```\n$ ls -la\n```", "Code"),
        ("# Plan for **Q3** launch", "Plan for Q3 launch"),
        (
            "See [the docs](https://example.com/a/b) and <https://x.org>",
            "See the docs and https://x.org",
        ),
        ("> quoted _advice_ with `inline()` code", "quoted advice with inline() code"),
        ("- first item\n- second item", "first item second item"),
        ("| a | b |\n|---|---|\n| 1 | 2 |", "a b 1 2"),
        ("snake_case_name stays", "snake_case_name stays"),
        ("2 * 3 * 4 is 24", "2 * 3 * 4 is 24"),
        ("   \n\n", "New chat"),
    ],
)
def test_a_title_is_the_message_s_plain_words(message: str, title: str) -> None:
    assert title_from(message, "New chat") == title


def test_a_long_title_is_cut_at_a_word() -> None:
    title = title_from(
        "Please **summarise** the attached quarterly report for the board meeting", "x"
    )
    assert title == "Please summarise the attached quarterly report…"
    assert len(title) <= 48
    assert plain_text("**bold** and *it*") == "bold and it"


def test_a_title_reads_only_the_start_of_a_huge_message() -> None:
    huge = "Summary of the logs " + "*x " * 60_000  # an unpaired marker, 180 KB on one line
    assert (
        title_from(huge, "x")
        == title_from(huge[:2_000], "x")
        == "Summary of the logs *x *x *x *x *x *x *x *x *x…"
    )

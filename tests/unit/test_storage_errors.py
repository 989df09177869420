"""Storage failures as SQLite really reports them — a full database, a full disk, a
read-only folder, a lock held by another connection, a damaged file — each becomes a
ContextDesk error that says what happened, and nothing is half-written."""

from __future__ import annotations

import json
import shlex
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_app.chats import Engine
from desktop_app.context.facts import Fact
from desktop_app.context.state import ContextState
from desktop_app.core.errors import ErrorKind
from desktop_app.core.messages import user_text
from desktop_app.storage.errors import StorageError
from desktop_app.storage.store import ChatStore
from tests.unit.builders import a, u

BIG = "x" * 200_000  # more than any free page a small database has left


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChatStore]:
    opened = ChatStore.open(tmp_path / "test.sqlite3", busy_timeout=0.2)
    yield opened
    opened.close()


def cap_at_current_size(store: ChatStore) -> None:
    """SQLite's own limit: a write needing one more page fails with SQLITE_FULL."""
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages}")


def test_a_full_database_says_so_and_changes_nothing(store: ChatStore) -> None:
    chat = store.create_chat("Kept")
    store.append_messages(chat.id, [u("one"), a("two")])
    store.save_context_state(chat.id, ContextState().pin(Fact("keep me")))
    cap_at_current_size(store)
    for write in (
        lambda: store.append_message(chat.id, user_text(BIG)),
        lambda: store.save_context_state(chat.id, ContextState().pin(Fact(BIG))),
        lambda: store.create_chat(BIG),
    ):
        with pytest.raises(StorageError) as raised:
            write()
        assert raised.value.kind is ErrorKind.DISK_FULL
        assert raised.value.title == "The disk is full"
        assert "Nothing was changed" in raised.value.message
        assert "SQLITE_FULL" in raised.value.info.details
    assert [m.text for m in store.messages(chat.id)] == ["one", "two"]
    assert [f.text for f in store.context_state(chat.id).facts] == ["keep me"]
    assert [c.title for c in store.list_chats()] == ["Kept"]


def test_a_lock_held_by_another_program_is_named(store: ChatStore) -> None:
    chat = store.create_chat()
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another program in the middle of a write
    try:
        with pytest.raises(StorageError) as raised:
            store.append_message(chat.id, user_text("hello"))
        assert raised.value.kind is ErrorKind.DATABASE_LOCKED
        assert "locked" in raised.value.message
        assert raised.value.retryable
    finally:
        other.execute("ROLLBACK")
        other.close()
    store.append_message(chat.id, user_text("hello"))  # the lock is gone: it goes through
    assert [m.text for m in store.messages(chat.id)] == ["hello"]


def test_a_damaged_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "contextdesk.sqlite3"
    path.write_bytes(b"this is not a database, just bytes " * 200)
    before = path.read_bytes()
    with pytest.raises(StorageError) as raised:
        ChatStore.open(path)
    assert raised.value.kind is ErrorKind.DATABASE_DAMAGED
    assert "backup" in raised.value.message
    assert path.read_bytes() == before


def test_the_engine_reports_a_damaged_database_too(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    (home / "data" / "contextdesk.sqlite3").write_bytes(b"\x00garbage" * 1000)
    with pytest.raises(StorageError, match="damaged"):
        Engine.open(home)


# -- a real full disk and a real read-only folder, in a mount namespace of their own ----------

SCENARIO = textwrap.dedent(
    """
    import json, os, subprocess, sys
    from pathlib import Path
    from desktop_app.chats import Engine
    from desktop_app.core.errors import ContextDeskError
    from desktop_app.core.messages import user_text
    from tests.fakes.tools import ScriptedApprover

    home = Path(sys.argv[1])
    report = {}
    engine = Engine.open(home)
    chat = engine.new_chat("On a tiny disk")
    chat.memory.pin("Refund 847.20 EUR by 2026-04-13")
    filler = home / "filler"
    with open(filler, "wb") as f:  # fill the disk to the last byte
        try:
            while True:
                f.write(b"\\0" * 65536)
                f.flush()
        except OSError as exc:
            report["filled"] = exc.errno
    for name, act in {
        "pin": lambda: chat.memory.pin("y" * 300_000),
        "send": lambda: chat.turns.start(user_text("z" * 300_000), ScriptedApprover()),
    }.items():
        try:
            act()
            report[name] = "written"
        except ContextDeskError as exc:
            report[name] = [str(exc.kind), exc.title]
    report["busy_after_failed_send"] = chat.busy
    engine.close()
    filler.unlink()
    if sys.argv[2] == "read-only":
        subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
    engine = Engine.open(home)
    chat = engine.chat(chat.id)
    report["facts"] = [f.text for f in chat.state.facts]
    report["messages"] = len(chat.messages())
    if sys.argv[2] == "read-only":
        try:
            chat.memory.pin("on a read-only folder")
            report["read_only_pin"] = "written"
        except ContextDeskError as exc:
            report["read_only_pin"] = [str(exc.kind), exc.title]
    engine.close()
    print(json.dumps(report))
    """
)


def in_tiny_tmpfs(tmp_path: Path, mode: str) -> dict[str, object]:
    """Run SCENARIO as root of a user+mount namespace, its data on a 1 MB tmpfs."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) for a private tmpfs")
    home = tmp_path / "tiny"
    home.mkdir()
    root = Path(__file__).resolve().parents[2]
    scenario = tmp_path / "scenario.py"
    scenario.write_text(SCENARIO)
    script = f"mount -t tmpfs -o size=1m tmpfs {shlex.quote(str(home))} && exec " + shlex.join(
        [sys.executable, str(scenario), str(home), mode]
    )
    done = subprocess.run(
        ["unshare", "--map-root-user", "--mount", "sh", "-c", script],
        capture_output=True,
        text=True,
        cwd=root,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "HOME": str(tmp_path)},
        timeout=60,
        check=False,
    )
    if done.returncode != 0 and "Operation not permitted" in done.stderr:
        pytest.skip(f"user namespaces are not allowed here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_full_disk_gives_a_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    report = in_tiny_tmpfs(tmp_path, "full")
    assert report["filled"] == 28  # ENOSPC: the disk really was full
    assert report["pin"] == ["disk_full", "The disk is full"]
    assert report["send"] == ["disk_full", "The disk is full"]
    assert report["busy_after_failed_send"] is False  # no turn started for an unsaved message
    assert report["facts"] == ["Refund 847.20 EUR by 2026-04-13"]
    assert report["messages"] == 0


def test_a_read_only_folder_is_named(tmp_path: Path) -> None:
    report = in_tiny_tmpfs(tmp_path, "read-only")
    assert report["facts"] == ["Refund 847.20 EUR by 2026-04-13"]  # still readable
    assert report["read_only_pin"] == ["read_only", "The data folder is read-only"]


def test_a_daily_copy_is_kept_to_restore_from(tmp_path: Path) -> None:
    engine = Engine.open(tmp_path / "home")
    chat = engine.new_chat("Worth keeping")
    chat.memory.pin("Refund 847.20")
    copy = engine.back_up_if_due()
    assert copy is not None
    assert engine.back_up_if_due() is None  # one a day
    assert copy.stat().st_mode & 0o077 == 0  # private, like the database
    for day in ("2026-01-01", "2026-01-02", "2026-01-03"):
        (copy.parent / f"contextdesk-{day}.sqlite3").write_bytes(b"")
    copy.unlink()
    assert engine.back_up_if_due() == copy
    assert sorted(p.name for p in copy.parent.iterdir()) == [
        "contextdesk-2026-01-02.sqlite3",
        "contextdesk-2026-01-03.sqlite3",
        copy.name,
    ]
    engine.close()
    restored = ChatStore.open(copy)
    try:
        assert [c.title for c in restored.list_chats()] == ["Worth keeping"]
        assert [f.text for f in restored.context_state(chat.id).facts] == ["Refund 847.20"]
    finally:
        restored.close()
    damaged = tmp_path / "home" / "data" / "contextdesk.sqlite3"
    damaged.write_bytes(b"\x00" * 4096)
    with pytest.raises(StorageError, match="backups") as raised:
        Engine.open(tmp_path / "home")
    assert raised.value.kind is ErrorKind.DATABASE_DAMAGED
    assert damaged.read_bytes() == b"\x00" * 4096  # left as it was


def test_the_ledger_and_projects_say_a_full_disk_as_the_store_does(tmp_path: Path) -> None:
    """They work on the connection directly: their failures were raw `sqlite3` errors
    that reached the window as "Something went wrong"."""
    from desktop_app.core.cancel import CancelToken
    from desktop_app.storage import ledger, projects
    from tests.fakes.tools import ScriptedApprover

    engine = Engine.open(tmp_path / "home", demo=True)
    try:
        chat = engine.new_chat()
        question = "A question that is stored first. " + BIG  # its request needs new pages
        turn = chat.turns.start(user_text(question), ScriptedApprover())
        cap_at_current_size(engine.store)
        failed = None
        for event in turn.events(CancelToken()):
            try:
                turn.record(event)  # the ledger writes the request when it starts
            except StorageError as exc:
                failed = exc
                break
        turn.finish()
        assert failed is not None
        assert failed.kind is ErrorKind.DISK_FULL
        assert "contextdesk.sqlite3" in failed.message
        assert [m.text for m in chat.messages()] == [question]  # nothing lost
        with pytest.raises(StorageError) as raised:
            projects.create(engine.store.db, "x" * 200_000)
        assert raised.value.kind is ErrorKind.DISK_FULL
        with pytest.raises(StorageError):
            ledger.record(
                engine.store.db, chat.id, {"model": "m", "messages": [{"x": BIG}]}, server="s"
            )
    finally:
        engine.close()

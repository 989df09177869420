"""The user's data and key stay the user's: private folders and files (made so, and
tightened when found open), and a process other processes cannot read."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.chats import Engine
from desktop_app.config.paths import app_paths


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_data_folders_and_files_are_private(tmp_path: Path) -> None:
    engine = Engine.open(tmp_path / "home")
    engine.new_chat().memory.pin("Refund 847.20")
    engine.change_settings({"model": "claude-haiku-4-5"})
    paths = engine.paths
    engine.close()
    for folder in (paths.data, paths.config, paths.state, paths.logs):
        assert mode(folder) == 0o700, folder
    for file in [*paths.data.iterdir(), paths.settings_file]:
        assert mode(file) == 0o600, file


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_an_open_data_folder_is_tightened_at_start(tmp_path: Path) -> None:
    paths = app_paths(tmp_path / "home").ensure()
    paths.data.chmod(0o755)
    leaked = paths.config / "settings.json"
    leaked.write_text("{}")
    leaked.chmod(0o644)
    Engine.open(tmp_path / "home").close()
    assert mode(paths.data) == 0o700
    assert mode(leaked) == 0o600


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_the_app_process_cannot_be_read_by_its_children() -> None:
    code = (
        "import ctypes\n"
        "from desktop_app.config.privacy import protect_process\n"
        "libc = ctypes.CDLL(None)\n"
        "before = libc.prctl(3, 0, 0, 0, 0)\n"  # PR_GET_DUMPABLE
        "assert protect_process()\n"
        "print(before, libc.prctl(3, 0, 0, 0, 0))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "0"]


CHILD_READS_PARENT = (
    "import subprocess, sys\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "if sys.argv[2] == 'protect':\n"
    "    from desktop_app.config.privacy import protect_process\n"
    "    protect_process()\n"
    "found = subprocess.run(['sh', '-c', 'cat /proc/$PPID/environ'], capture_output=True,\n"
    "                       env={'PATH': '/usr/bin:/bin'}).stdout\n"
    "print('readable' if b'sk-ant-CANARY' in found else 'hidden')\n"
)


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("setpriv"),
    reason="runs the app as an unprivileged user (needs root and setpriv to switch)",
)
@pytest.mark.parametrize(("protect", "seen"), [("no", "readable"), ("protect", "hidden")])
def test_a_command_run_by_the_app_cannot_read_the_key_from_its_environment(
    protect: str, seen: str
) -> None:
    """As an ordinary user would run it: the child shares the user, so only the
    not-dumpable flag keeps /proc/PARENT/environ (with the key) from it."""
    root = Path(__file__).resolve().parents[2]
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    done = subprocess.run(
        [*as_nobody, sys.executable, "-c", CHILD_READS_PARENT, str(root), protect],
        capture_output=True,
        text=True,
        env={"ANTHROPIC_API_KEY": "sk-ant-CANARY-1", "PATH": "/usr/bin:/bin"},
        timeout=30,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot run as an unprivileged user here: {done.stderr.strip()[-200:]}")
    assert done.stdout.strip() == seen


WINDOW_DUMPABLE = """
import ctypes, sys
import desktop_app.ui.gui as gui

def run_gui(home, demo=False, smoke_test=False):  # the window's start, to its application
    gui.make_app()
    print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0), flush=True)  # PR_GET_DUMPABLE
    return 0

gui.run_gui = run_gui
from desktop_app.app import main

sys.exit(main(["--home", sys.argv[1]]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_the_window_s_process_is_private_before_its_application_is_made(tmp_path: Path) -> None:
    """The real entry point makes the window's process not dumpable on a thread while Qt
    loads (ctypes, ~2 ms, off the way to the first frame); the application is made after."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", WINDOW_DUMPABLE, str(tmp_path / "home")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.stdout.split() == ["0"], done.stderr[-2000:]

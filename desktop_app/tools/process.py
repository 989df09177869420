"""Running a shell command for the model, safely enough to leave unattended briefly.

- its own process group (session), so a cancel or timeout kills everything it started;
- stdin closed: a command that waits for input gets EOF at once (claude-code#67234);
- a timeout (default 120 s); output capped at 30,000 characters with a marker;
- an allowlisted environment (PATH, HOME, the locale…, plus names the user adds): a
  secret can hide under any variable name, so none is passed unless named.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.cancel import CancelToken
from desktop_app.core.errors import Cancelled

OUTPUT_CAP = 30_000
DEFAULT_TIMEOUT_S = 120.0
# What a command sees of the app's environment: these names only (an allowlist: a
# secret hides under any name — DATABASE_URL, GH_PAT), plus what the user adds by name.
PASSED_THROUGH = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TMPDIR", "TZ")


@dataclass(frozen=True, slots=True)
class CommandResult:
    output: str
    exit_code: int | None  # None: killed (timeout or cancel)
    timed_out: bool
    seconds: float


def safe_environment(
    env: dict[str, str] | None = None, extra: Iterable[str] = ()
) -> dict[str, str]:
    """What a command may see: the allowlisted variables, the locale's `LC_*`, and the
    names the user added (`extra`) — never an `ANTHROPIC_*` one, whatever is added."""
    source = dict(os.environ if env is None else env)
    wanted = set(PASSED_THROUGH) | {name.strip() for name in extra if name.strip()}
    return {
        k: v
        for k, v in source.items()
        if (k in wanted or k.startswith("LC_")) and not k.startswith("ANTHROPIC_")
    }


def cap_output(text: str, cap: int = OUTPUT_CAP) -> str:
    if len(text) <= cap:
        return text
    head, tail = text[: cap * 2 // 3], text[-cap // 3 :]
    return (
        f"{head}\n[… {len(text) - len(head) - len(tail):,} characters cut by ContextDesk …]\n{tail}"
    )


def run_command(
    command: str,
    cwd: Path,
    cancel: CancelToken,
    timeout: float = DEFAULT_TIMEOUT_S,
    extra_env: Iterable[str] = (),
) -> CommandResult:
    """Run `command` in a shell in `cwd`, with the allowlisted environment (and the
    variables named in `extra_env`); raise `Cancelled` if `cancel` fires (the whole
    process group is killed first)."""
    started = time.monotonic()
    process = subprocess.Popen(
        ["/bin/sh", "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=safe_environment(extra=extra_env),
        start_new_session=True,
    )
    chunks: list[bytes] = []
    reader = threading.Thread(target=_drain, args=(process, chunks), daemon=True)
    reader.start()
    unregister = cancel.on_cancel(lambda: _kill_group(process))
    try:
        try:
            exit_code: int | None = process.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_group(process)
            process.wait()
            exit_code, timed_out = None, True
    finally:
        unregister()
        _kill_group(process)  # anything the command left running in its group goes too
    reader.join(timeout=2)
    if process.stdout is not None:
        process.stdout.close()
    if cancel.cancelled:
        raise Cancelled()
    output = b"".join(chunks).decode("utf-8", "replace")
    return CommandResult(cap_output(output), exit_code, timed_out, time.monotonic() - started)


def _drain(process: subprocess.Popen[bytes], chunks: list[bytes]) -> None:
    assert process.stdout is not None
    fd, total = process.stdout.fileno(), 0
    while chunk := os.read(fd, 65536):
        if total < OUTPUT_CAP * 8:  # enough for head + tail; a flood's middle is dropped
            chunks.append(chunk)
        total += len(chunk)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(process.pid, signal.SIGKILL)

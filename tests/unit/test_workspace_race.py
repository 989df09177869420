"""The workspace race: another process flips entries between a file (or folder) and a
symlink that leads out while the model reads and writes. Nothing outside is read or
written, and every refusal is an error result, never an aborted turn."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop_app.core.blocks import ToolUseBlock
from desktop_app.core.cancel import CancelToken
from desktop_app.tools import confined
from desktop_app.tools.builtin import builtin_tools
from desktop_app.tools.registry import ToolRegistry

FLIPPER = """
import os, shutil, sys, time
ws, outside, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
os.chdir(ws)
end = time.monotonic() + seconds
n = 0
def quietly(step, *args):
    try:
        step(*args)
    except OSError:  # the writer made `d` again meanwhile: fine, go on
        shutil.rmtree(args[-1], ignore_errors=True)
while time.monotonic() < end:
    os.symlink(os.path.join(outside, "secret.txt"), ".link")
    os.replace(".link", "flip")                      # flip: now a link out
    with open(".file", "w") as f:
        f.write("inside")
    os.replace(".file", "flip")                      # flip: a file inside again
    quietly(os.rename, "d", ".d")
    quietly(os.symlink, outside, "d")                # d: now a link to the outside folder
    quietly(os.unlink, "d")
    quietly(os.rename, ".d", "d")                    # d: a real folder again
    n += 1
print(n)
"""


@pytest.mark.skipif(not confined.supported(), reason="needs dir_fd (POSIX)")
def test_flipping_links_never_leaks_a_read_or_a_write(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP-SECRET-CONTENT")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "flip").write_text("inside")
    (workspace / "d").mkdir()
    tools = ToolRegistry(builtin_tools(), workspace=workspace)
    flipper = subprocess.Popen(
        [sys.executable, "-c", FLIPPER, str(workspace), str(outside), "4"],
        stdout=subprocess.PIPE,
        text=True,
    )
    reads = writes = refused = 0
    leaked: list[str] = []
    deadline = time.monotonic() + 3.5
    try:
        while time.monotonic() < deadline:
            for n in range(20):
                read = tools.run(
                    ToolUseBlock(f"r{n}", "read_file", {"path": "flip"}), CancelToken()
                )
                reads += 1
                refused += read.is_error
                if "TOP-SECRET-CONTENT" in str(read.content):
                    leaked.append(str(read.content))
            write = tools.run(
                ToolUseBlock("w", "write_file", {"path": f"d/new{writes}.txt", "content": "x"}),
                CancelToken(),
            )
            writes += 1
            refused += write.is_error
    finally:
        flipper_rounds = int(flipper.communicate(timeout=30)[0] or 0)
    assert flipper_rounds > 100  # the race really ran alongside
    assert reads >= 1000
    assert leaked == []
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]  # nothing written out
    assert 0 < refused < reads + writes  # some refused while flipped; many went through

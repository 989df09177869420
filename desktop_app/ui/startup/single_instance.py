"""One window per data folder. The first copy of the app holds the folder's lock
(`chats.instance`) and listens on a local socket named after the folder; a second copy
finds the lock taken, asks the first to come to the front, and quits without opening the
database — so two windows never write to the same chats.

The socket lives in a folder only this user can enter ($XDG_RUNTIME_DIR, else a 0700
folder of ours in the temp folder, refused when another user owns it or others may
enter): in /tmp itself its name was predictable and its mode the umask's."""

from __future__ import annotations

import logging
import os
import stat
import sys
import tempfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from desktop_app.chats import InstanceLock

if TYPE_CHECKING:  # QtNetwork (~30 ms to import) loads after the first paint
    from PySide6.QtNetwork import QLocalServer

log = logging.getLogger(__name__)

ACTIVATE = b"activate\n"
CONNECT_MS = 1500
SOCKET_PATH_MAX = 100  # a Unix socket's path fits in 108 bytes (sun_path)
CLAIM_WAIT_S = 1.0  # a command line probing the lock holds it for an instant


def server_name(data_folder: Path) -> str | None:
    """One socket per data folder (two checksums of its path: `zlib` is loaded already,
    `hashlib` would cost the first frame ~5 ms), in this user's own folder — None when
    there is no such folder to be had (then copies cannot call each other; the lock still
    keeps them from the same chats)."""
    path = str(data_folder.resolve()).encode("utf-8")
    digest = f"{zlib.crc32(path):08x}{zlib.adler32(path):08x}"
    if sys.platform == "win32":  # a named pipe, which Qt makes for this user alone
        return f"contextdesk-{digest}"
    folder = private_socket_folder()
    if folder is None or len(str(folder / digest)) > SOCKET_PATH_MAX:
        return None
    return str(folder / digest)


def private_socket_folder() -> Path | None:
    """$XDG_RUNTIME_DIR/contextdesk, else <temp>/contextdesk-<uid>: made 0700, and used
    only when it is a real folder of this user's that no one else may enter."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        folder = Path(runtime) / "contextdesk"
    else:
        folder = Path(tempfile.gettempdir()) / f"contextdesk-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        found = folder.lstat()  # a symlink planted there is not followed
    except OSError as exc:
        log.warning("no folder for the window's socket: %s", exc)
        return None
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
        log.warning("%s is not this user's folder: the window's socket is not made", folder)
        return None
    if found.st_mode & 0o077:
        log.warning("%s may be entered by others: the window's socket is not made", folder)
        return None
    return folder


class SingleInstance(QObject):
    """Signals:
    activation_requested(): another copy was started on this folder: come to the front.
    """

    activation_requested = Signal()

    def __init__(self, data_folder: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.lock = InstanceLock(data_folder)
        self.name = server_name(data_folder)
        self.server: QLocalServer | None = None
        self.woke_the_other = False

    def claim(self) -> bool:
        """True: this copy owns the folder (call `listen` once the window shows). False:
        another copy does; `woke_the_other` says whether it answered the call to come
        to the front."""
        if not self.lock.acquire(CLAIM_WAIT_S):
            self.woke_the_other = self._wake_the_other()
            return False
        return True

    def listen(self) -> None:
        """Answer copies started later (they ask this one to come to the front)."""
        from PySide6.QtNetwork import QLocalServer

        if self.name is None:
            return
        QLocalServer.removeServer(self.name)  # left by a copy that crashed: we hold the lock
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._on_server_new_connection)
        self.server.listen(self.name)

    def release(self) -> None:
        if self.server is not None:
            self.server.close()
        self.lock.release()

    def owner(self) -> int | None:
        return self.lock.owner()

    def _wake_the_other(self) -> bool:
        from PySide6.QtNetwork import QLocalSocket

        if self.name is None:
            return False
        socket = QLocalSocket()
        socket.connectToServer(self.name)
        if not socket.waitForConnected(CONNECT_MS):
            return False  # still starting, or hung
        socket.write(ACTIVATE)
        sent = socket.waitForBytesWritten(CONNECT_MS)
        socket.disconnectFromServer()
        return bool(sent)

    @Slot()
    def _on_server_new_connection(self) -> None:
        assert self.server is not None
        while (connection := self.server.nextPendingConnection()) is not None:
            # The message is all we need: what it carries is read and dropped (a bound C++
            # method is not a slot PySide can connect to: it warns "No Wrapper found")
            connection.readyRead.connect(lambda c=connection: c.readAll())
            connection.disconnected.connect(connection.deleteLater)
            self.activation_requested.emit()

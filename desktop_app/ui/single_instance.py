"""One window per data folder. The first copy of the app holds the folder's lock
(`chats.instance`) and listens on a local socket named after the folder; a second copy
finds the lock taken, asks the first to come to the front, and quits without opening the
database — so two windows never write to the same chats."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from desktop_app.chats.instance import InstanceLock

if TYPE_CHECKING:  # QtNetwork (~30 ms to import) loads after the first paint
    from PySide6.QtNetwork import QLocalServer

ACTIVATE = b"activate\n"
CONNECT_MS = 1500
CLAIM_WAIT_S = 1.0  # a command line probing the lock holds it for an instant


def server_name(data_folder: Path) -> str:
    """One name per data folder (two checksums of its path: `zlib` is loaded already,
    `hashlib` would cost the first frame ~5 ms)."""
    path = str(data_folder.resolve()).encode("utf-8")
    return f"contextdesk-{zlib.crc32(path):08x}{zlib.adler32(path):08x}"


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

        QLocalServer.removeServer(self.name)  # left by a copy that crashed: we hold the lock
        self.server = QLocalServer(self)
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
            connection.readyRead.connect(connection.readAll)  # the message is all we need
            connection.disconnected.connect(connection.deleteLater)
            self.activation_requested.emit()

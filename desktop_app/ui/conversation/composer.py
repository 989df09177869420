"""Where the user writes: a multi-line draft with its live token estimate, attachments
(images pasted or dropped, downscaled to the API's limits; text files), and one button
that is Send while idle and Stop while a turn runs.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QEvent,
    QIODevice,
    QMimeData,
    QObject,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QFocusEvent, QImage, QKeyEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.chats import (
    API_MAX_EDGE,
    FALLBACK_TOKENS,
    image_tokens,
    read_given_file,
    shown_name,
)
from desktop_app.core.blocks import Block, ImageBlock, TextBlock
from desktop_app.core.errors import ContextDeskError
from desktop_app.core.messages import Message

MAX_PIXELS = FALLBACK_TOKENS * 750  # beyond this the API scales down anyway (≈1.15 MP)
MAX_TEXT_FILE_BYTES = 1_000_000
# How the focus came when the composer's ring shows (keys, not a click or the window)
KEYED_FOCUS = (
    Qt.FocusReason.TabFocusReason,
    Qt.FocusReason.BacktabFocusReason,
    Qt.FocusReason.ShortcutFocusReason,
)
MAX_IMAGE_FILE_BYTES = 50_000_000  # a camera's photo; scaled down before it is sent
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"}
ESTIMATE_DELAY_MS = 150
# A paste this long becomes a card (sent whole, as pasted) instead of filling the draft
PASTE_CARD_LINES = 40
PASTE_CARD_CHARS = 2_000


@dataclass(frozen=True)
class Attachment:
    name: str
    block: Block
    tokens: int


class AttachmentError(Exception):
    pass


def image_attachment(image: QImage, name: str = "pasted image") -> Attachment:
    """Downscale to what the API would keep (long edge ≤ 1568 px, ≈1.15 MP) and encode:
    PNG when it has transparency, else JPEG (a tenth of the bytes for photos)."""
    if image.isNull():
        raise AttachmentError(f"{name}: not an image Qt can read")
    scale = min(1.0, API_MAX_EDGE / max(image.width(), image.height()))
    scale = min(scale, (MAX_PIXELS / (image.width() * image.height())) ** 0.5)
    if scale < 1.0:
        image = image.scaled(
            max(1, int(image.width() * scale)),
            max(1, int(image.height() * scale)),
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    png = image.hasAlphaChannel()
    # The stubs say bytes; PySide6 6.11 accepts only str at run time.
    image.save(buffer, "PNG" if png else "JPEG", -1 if png else 88)  # type: ignore[call-overload]
    encoded = base64.b64encode(bytes(data.data())).decode("ascii")
    block = ImageBlock("image/png" if png else "image/jpeg", encoded)
    return Attachment(name, block, image_tokens(image.width(), image.height()))


def file_attachment(path: Path, count: Callable[[str], int | None]) -> Attachment:
    """An image file, or a UTF-8 text file quoted as a text block."""
    name = shown_name(path)
    image = path.suffix.lower() in IMAGE_SUFFIXES
    try:
        data = read_given_file(
            path,
            MAX_IMAGE_FILE_BYTES if image else MAX_TEXT_FILE_BYTES,
            "" if image else "Text files up to 1 MB can be attached.",
        )
    except ContextDeskError as exc:
        raise AttachmentError(exc.message) from None
    if image:
        return image_attachment(QImage.fromData(data), name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise AttachmentError(f"{name} is not UTF-8 text or a PNG/JPEG/GIF/WebP image") from None
    quoted = f"File: {name}\n```\n{text}\n```"
    return Attachment(name, TextBlock(quoted), count(quoted) or 0)


def pasted_text(text: str, count: Callable[[str], int | None]) -> Attachment | None:
    """A long paste as a card, the way Claude desktop takes it (None: short enough to
    type around). Its text is sent exactly as pasted."""
    lines = text.count("\n") + 1
    if lines < PASTE_CARD_LINES and len(text) < PASTE_CARD_CHARS:
        return None
    return Attachment(f"Pasted text · {lines:,} lines", TextBlock(text), count(text) or 0)


class DraftEdit(QPlainTextEdit):
    """Signals:
    submitted(): the send key was pressed.
    attachments_dropped(object): a list of `Attachment`s (or `AttachmentError`s).
    """

    submitted = Signal()
    attachments_dropped = Signal(object)
    escaped = Signal()  # Esc while the draft is an edit: the edit is dropped

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTabChangesFocus(True)  # Tab leaves the draft: no keyboard trap
        self.send_with_enter = True
        self.editing = False  # the draft rewrites a sent message (Esc drops the edit)
        self.count: Callable[[str], int | None] = lambda _text: None
        # True while a list of `/` commands has the keys (its Enter chooses, not sends).
        self.completing: Callable[[], bool] = lambda: False

    def event(self, event: QEvent) -> bool:
        if (
            self.editing
            and event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
        ):
            event.accept()  # Esc drops the edit here; it does not stop a reply
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self.editing and event.key() == Qt.Key.Key_Escape:
            self.escaped.emit()
            return
        keys = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape, Qt.Key.Key_Tab)
        if event.key() in keys and self.completing():
            event.ignore()  # the list of commands takes it
            return
        ctrl_tab = event.modifiers() & Qt.KeyboardModifier.ControlModifier
        if ctrl_tab and event.key() in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
            # Ctrl+Tab leaves too, as in every other text box that keeps Tab
            self.focusNextPrevChild(event.key() == Qt.Key.Key_Tab)
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            modifiers = event.modifiers()
            ctrl = bool(modifiers & Qt.KeyboardModifier.ControlModifier)
            shift = bool(modifiers & Qt.KeyboardModifier.ShiftModifier)
            if ctrl or (self.send_with_enter and not shift):
                self.submitted.emit()
                return
        super().keyPressEvent(event)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return source.hasImage() or source.hasUrls() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        found: list[Attachment | AttachmentError] = []
        if source.hasImage():
            found.append(_attempt(lambda: image_attachment(QImage(source.imageData()))))
        elif source.hasUrls() and all(url.isLocalFile() for url in source.urls()):
            for url in source.urls():
                path = Path(url.toLocalFile())
                found.append(_attempt(lambda path=path: file_attachment(path, self.count)))  # type: ignore[misc]
        elif source.hasText() and (card := pasted_text(source.text(), self.count)) is not None:
            found.append(card)
        if found:
            self.attachments_dropped.emit(found)
            return
        super().insertFromMimeData(source)


def _attempt(make: Callable[[], Attachment]) -> Attachment | AttachmentError:
    try:
        return make()
    except AttachmentError as exc:
        return exc


class Composer(QWidget):
    """Signals:
    send_requested(object): the blocks of the user's message (text + attachments); while
        a sent message is being edited (`editing`), its new version.
    stop_requested(): Stop was pressed.
    draft_changed(object): the draft's blocks, as Send would send them, after the user
        paused typing or changed an attachment (for the live plan).
    problem(str): an attachment could not be used.
    pdf_chosen(Path): a PDF to attach (as a document or as text: the pane asks).
    """

    send_requested = Signal(object)
    stop_requested = Signal()
    draft_changed = Signal(object)
    problem = Signal(str)
    pdf_chosen = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.busy = False
        self.attachments: list[Attachment] = []
        self.editing: Message | None = None  # the sent message the draft rewrites
        self._kept_draft = ""  # what was being written before the edit began
        self.edit = DraftEdit()
        self.edit.setObjectName("draft")
        self.edit.setPlaceholderText("Message Claude…  (Enter to send, Shift+Enter for a new line)")
        self.edit.document().documentLayout().documentSizeChanged.connect(self._on_draft_resized)
        self.edit.submitted.connect(self._on_send_clicked)
        self.edit.textChanged.connect(self._on_edit_text_changed)
        self.edit.attachments_dropped.connect(self._on_edit_attachments_dropped)
        self.edit.escaped.connect(self.stop_editing)
        self.editing_bar = QWidget()
        self.editing_bar.setObjectName("editingBar")
        self.editing_bar.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        editing_row = QHBoxLayout(self.editing_bar)
        editing_row.setContentsMargins(4, 0, 0, 0)
        self.editing_label = QLabel(
            "Editing your message: Send makes a new version beside it (‹ › switches back)"
        )
        self.editing_label.setObjectName("editingLabel")
        cancel = QToolButton()
        cancel.setObjectName("cancelEdit")
        cancel.setText("Cancel")
        cancel.setToolTip("Keep the message as it was (Esc)")
        cancel.setAutoRaise(True)
        cancel.clicked.connect(self.stop_editing)
        editing_row.addWidget(self.editing_label, 1)
        editing_row.addWidget(cancel)
        self.editing_bar.hide()
        self.attach_button = QToolButton()
        self.attach_button.setObjectName("attach")
        self.attach_button.setText("+ Attach")
        self.attach_button.setToolTip(
            "Attach images or text files (you can also paste or drop them)"
        )
        self.attach_button.clicked.connect(self._on_attach_clicked)
        self.estimate = QLabel()
        self.estimate.setObjectName("draftTokens")
        self.estimate.setWordWrap(True)  # the price may follow the tokens
        self._price = ""
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("send")
        self.send_button.setDefault(True)
        self.send_button.clicked.connect(self._on_send_clicked)
        self.attachment_bar = QHBoxLayout()
        self.attachment_bar.setContentsMargins(0, 0, 0, 0)
        self.attachment_bar.addStretch(1)
        self._estimate_timer = QTimer(self)
        self._estimate_timer.setSingleShot(True)
        self._estimate_timer.setInterval(ESTIMATE_DELAY_MS)
        self._estimate_timer.timeout.connect(self._on_estimate_timer_timeout)

        buttons = QHBoxLayout()
        buttons.addWidget(self.attach_button)
        buttons.addWidget(self.estimate, 1)
        buttons.addWidget(self.send_button)
        # One rounded box holds the draft, its cards and its buttons, as in the apps
        # people come from (drawn by the conversation's style sheet: `theme.CONVERSATION`)
        self.box = QFrame()
        self.box.setObjectName("composerBox")
        inside = QVBoxLayout(self.box)
        inside.setContentsMargins(10, 8, 8, 8)
        inside.setSpacing(4)
        inside.addLayout(self.attachment_bar)
        inside.addWidget(self.edit)
        inside.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 4, 12, 10)
        layout.addWidget(self.editing_bar)
        layout.addWidget(self.box)
        self.edit.installEventFilter(self)  # the box shows where the keys go (its ring)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self._on_draft_resized()
        self._show_estimate()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.edit and event.type() in (QEvent.Type.FocusIn, QEvent.Type.FocusOut):
            # The ring says where the keys went: after Tab or a shortcut, not a click (as
            # a browser's :focus-visible) — the composer has the focus most of the time.
            keyed = isinstance(event, QFocusEvent) and event.reason() in KEYED_FOCUS
            self.box.setProperty("focused", event.type() == QEvent.Type.FocusIn and keyed)
            self.box.style().unpolish(self.box)  # the sheet reads the property again
            self.box.style().polish(self.box)
        return False

    # -- used by the window -----------------------------------------------------------------

    def set_counter(self, count: Callable[[str], int | None]) -> None:
        """How to count a draft: returns None while the encoding is still loading."""
        self.edit.count = count
        self._show_estimate()

    def set_send_with_enter(self, enabled: bool) -> None:
        self.edit.send_with_enter = enabled
        keys = "Enter to send, Shift+Enter for a new line" if enabled else "Ctrl+Enter to send"
        self.edit.setPlaceholderText(f"Message Claude…  ({keys})")

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.send_button.setText("Stop" if busy else "Send")
        self.send_button.setToolTip("Stop the reply (Esc)" if busy else "Send (Enter)")

    @property
    def draft_text(self) -> str:
        """The user's own draft: the text here, or, while a sent message is edited here,
        the draft the edit stands in for."""
        return self._kept_draft if self.editing is not None else self.edit.toPlainText()

    def set_draft(self, text: str) -> None:
        self.edit.setPlainText(text)
        self.edit.setFocus()

    def clear(self) -> None:
        """After a send: empty — or, once an edit is sent, the draft it stood in for."""
        kept = self._kept_draft if self.editing is not None else ""
        self.edit.clear()
        self.attachments.clear()
        self._rebuild_attachment_bar()
        self._end_editing()
        if kept:
            self.edit.setPlainText(kept)

    def start_editing(self, message: Message) -> None:
        """Rewrite a sent message of the user's here, in place of the draft (which
        comes back if the edit is dropped). Its images go with the new version."""
        if self.editing is None:
            self._kept_draft = self.edit.toPlainText()
        self.editing = message
        self.edit.editing = True
        self.editing_bar.show()
        self.set_draft(message.text)
        self.edit.selectAll()

    @Slot()
    def stop_editing(self) -> None:
        """Drop the edit: the message stays as it was, the draft as it was."""
        if self.editing is None:
            return
        kept = self._kept_draft
        self._end_editing()
        self.set_draft(kept)

    def _end_editing(self) -> None:
        self.editing = None
        self.edit.editing = False
        self._kept_draft = ""
        self.editing_bar.hide()

    def add_attachment(self, attachment: Attachment) -> None:
        self.attachments.append(attachment)
        self._rebuild_attachment_bar()
        self._show_estimate()
        self._estimate_timer.start()  # and the live plan, after a pause

    # -- slots ----------------------------------------------------------------------------------

    @Slot()
    def _on_send_clicked(self) -> None:
        if self.busy:
            self.stop_requested.emit()
            return
        blocks = self.draft_blocks()
        if blocks:
            self.send_requested.emit(blocks)

    def draft_blocks(self) -> list[Block]:
        """The user's message as it would be sent: attachments first, then the text."""
        text = self.edit.toPlainText().strip()
        blocks: list[Block] = [a.block for a in self.attachments]
        if text:
            blocks.append(TextBlock(text))
        return blocks

    @Slot()
    def _on_draft_resized(self) -> None:
        """Three lines to start with, growing with the draft up to twelve, then scrolling."""
        line = self.edit.fontMetrics().lineSpacing()
        lines = max(3, min(12, int(self.edit.document().size().height())))
        margins = self.edit.contentsMargins()
        frame = 2 * self.edit.frameWidth() + int(self.edit.document().documentMargin() * 2)
        self.edit.setFixedHeight(lines * line + frame + margins.top() + margins.bottom())

    @Slot()
    def _on_edit_text_changed(self) -> None:
        self._estimate_timer.start()

    @Slot()
    def _on_estimate_timer_timeout(self) -> None:
        self._show_estimate()
        self.draft_changed.emit(self.draft_blocks())

    @Slot(object)
    def _on_edit_attachments_dropped(self, found: list[Attachment | AttachmentError]) -> None:
        for item in found:
            if isinstance(item, AttachmentError):
                self.problem.emit(str(item))
            else:
                self.add_attachment(item)

    @Slot()
    def _on_attach_clicked(self) -> None:
        names, _ = QFileDialog.getOpenFileNames(
            self,
            "Attach files",
            "",
            "Images, PDFs and text (*.png *.jpg *.jpeg *.gif *.webp *.pdf *.txt *.md *.py *.json *.csv);;All files (*)",
        )
        pdfs = [Path(n) for n in names if Path(n).suffix.lower() == ".pdf"]
        for pdf in pdfs:  # as a document or as text: the pane asks, seeing both costs
            self.pdf_chosen.emit(pdf)
        others = [n for n in names if Path(n) not in pdfs]
        self._on_edit_attachments_dropped(
            [_attempt(lambda n=name: file_attachment(Path(n), self.edit.count)) for name in others]  # type: ignore[misc]
        )

    def _remove_attachment(self, attachment: Attachment) -> None:
        self.attachments.remove(attachment)
        self._rebuild_attachment_bar()
        self._show_estimate()
        self._estimate_timer.start()

    def _rebuild_attachment_bar(self) -> None:
        while self.attachment_bar.count() > 1:
            item = self.attachment_bar.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        for attachment in self.attachments:
            card = QToolButton()
            card.setObjectName("attachmentCard")
            card.setText(f"{attachment.name} · ≈{attachment.tokens:,} tokens ▾")
            card.setToolTip("Sent whole with this message: click to see it or remove it")
            card.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
            menu = QMenu(card)
            if isinstance(attachment.block, TextBlock):
                menu.addAction("Show…", functools.partial(self._preview, attachment))
            menu.addAction("Remove", functools.partial(self._remove_attachment, attachment))
            card.setMenu(menu)
            self.attachment_bar.insertWidget(self.attachment_bar.count() - 1, card)

    def _preview(self, attachment: Attachment) -> None:
        """The card's text, read-only, as it will be sent."""
        from desktop_app.ui.dialogs.text_viewer import show_text

        assert isinstance(attachment.block, TextBlock)
        show_text(self, attachment.name, attachment.block.text, name="attachmentPreview")

    def show_price(self, text: str) -> None:
        """What Send would cost now (`said.draft_price`), beside the draft's tokens."""
        self._price = text
        self._show_estimate()

    def _show_estimate(self) -> None:
        text = self.edit.toPlainText()
        counted = self.edit.count(text) if text.strip() else 0
        extra = sum(a.tokens for a in self.attachments)
        price = f" · {self._price}" if self._price else ""
        if counted is None:
            self.estimate.setText("counting…")
        elif counted or extra:
            self.estimate.setText(f"≈{counted + extra:,} tokens in this message{price}")
        else:
            self.estimate.setText("")

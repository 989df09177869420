"""The conversation: one `QListView` over the session's model, painted by one delegate.

It opens at the newest messages, loads older pages when scrolled near the top (keeping
what the user was reading in place), and follows a streaming reply only while the user
is at the bottom. A message's actions (`actions_for`) show in its context menu and in a
bar over it on hover or keyboard focus; the view only says what was asked, the window
decides what it does.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QPointF,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QContextMenuEvent, QGuiApplication, QHoverEvent, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QMenu,
    QStyleOptionViewItem,
    QWidget,
)

from desktop_app.core.blocks import ToolResultBlock, ToolUseBlock
from desktop_app.core.messages import Message, MessageStatus
from desktop_app.ui.conversation.message_actions import HoverBar, MessageAction
from desktop_app.ui.conversation.message_delegate import MessageDelegate
from desktop_app.ui.conversation.message_model import MessageListModel, Role
from desktop_app.ui.conversation.message_words import speaker

NEAR_TOP_PX = 40
AT_BOTTOM_PX = 8


class MessageListView(QListView):
    """Signals (each carries the `Message` it is about):
    exclude_toggled(object), pin_requested(object), fork_requested(object),
    edit_requested(object), retry_requested(object), regenerate_requested(object);
    and branch_requested(str): show this version of a message (its ‹ › were clicked,
    or Alt+Left/Right pressed on it); scrollbar_width_changed(int): the width the
    scrollbar takes from the right (0 when it is hidden) — the reading column is centred
    in what is left.
    """

    exclude_toggled = Signal(object)
    pin_requested = Signal(object)
    fork_requested = Signal(object)
    edit_requested = Signal(object)
    retry_requested = Signal(object)
    regenerate_requested = Signal(object)
    branch_requested = Signal(str)
    trace_requested = Signal(object)  # which requests carried a message (the ledger)
    scrollbar_width_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messages")
        self.delegate = MessageDelegate(self)
        self._loading_older = False
        self.setItemDelegate(self.delegate)
        self.delegate.branch_chosen.connect(self.branch_requested)
        self.delegate.show_all_requested.connect(self._on_delegate_show_all_requested)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.verticalScrollBar().setSingleStep(24)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setUniformItemSizes(False)
        self.setMouseTracking(True)
        self.setFrameShape(QListView.Shape.NoFrame)
        # Whether a message is left out of the context (the menu says Include, then): the
        # pane asks its chat — the view keeps no copy to fall out of date.
        self.is_excluded: Callable[[Message], bool] = lambda _message: False
        self.hover_bar = HoverBar(self.viewport())
        self._scrollbar_width = 0
        self._pointer: QPoint | None = None  # where the mouse is over the messages, if it is
        self.setAttribute(Qt.WidgetAttribute.WA_Hover)
        self.viewport().setAttribute(Qt.WidgetAttribute.WA_Hover)
        self._stick_to_bottom = True
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scroll_value_changed)
        bar.rangeChanged.connect(self._on_scroll_range_changed)

    def set_context_view(self, on: bool) -> None:
        """Every block's chip, or one quiet marker per message: laid out again from the
        same model (nothing is reloaded)."""
        if self.delegate.context_view == on:
            return
        self.delegate.context_view = on
        stick = self._stick_to_bottom
        self.scheduleDelayedItemsLayout()
        if stick:
            QTimer.singleShot(0, self, self.scrollToBottom)

    def set_reading_width(self, px: int) -> None:
        """The reading column's widest (Settings → Reading width): laid out again."""
        if self.delegate.column_px != px:
            self.delegate.column_px = px
            self.scheduleDelayedItemsLayout()

    def setModel(self, model: QAbstractItemModel | None) -> None:
        super().setModel(model)  # the layout cache stays: it is keyed by message id
        if model is not None:  # a new plan may move where the context starts (a divider)
            model.dataChanged.connect(
                self._on_model_data_changed, Qt.ConnectionType.UniqueConnection
            )
        self._stick_to_bottom = True
        self.scrollToBottom()

    def resizeEvent(self, event: QResizeEvent) -> None:
        stick = self._stick_to_bottom
        super().resizeEvent(event)
        if stick:
            self.scrollToBottom()

    @property
    def sticks_to_bottom(self) -> bool:
        return self._stick_to_bottom

    def restore_scroll(self, value: int | None) -> None:
        """Back to a chat: where the user left it, or the newest messages."""
        if value is None:
            self._stick_to_bottom = True
            self.scrollToBottom()
        else:
            self.verticalScrollBar().setValue(value)

    def scroll_to_message(self, message_id: str) -> bool:
        model = self.model()
        if not isinstance(model, MessageListModel):
            return False
        while (row := model.row_of(message_id)) is None and model.has_older():
            model.load_older()
        if row is None:
            return False
        self.scrollTo(model.index(row), QAbstractItemView.ScrollHint.PositionAtTop)
        return True

    def show_message(self, message_id: str) -> bool:
        """Bring a message into view and highlight it (a search result, a find)."""
        model = self.model()
        if not isinstance(model, MessageListModel) or not self.scroll_to_message(message_id):
            return False
        row = model.row_of(message_id)
        assert row is not None
        self.doItemsLayout()  # a chat just opened is not laid out yet: scroll where it will be
        self.scrollTo(model.index(row), QAbstractItemView.ScrollHint.PositionAtCenter)
        self._stick_to_bottom = False  # a reply streaming meanwhile must not scroll it away
        self.setCurrentIndex(model.index(row))
        return True

    @Slot(QModelIndex, QModelIndex, list)
    def _on_model_data_changed(
        self, _first: QModelIndex, _last: QModelIndex, roles: list[int]
    ) -> None:
        if Role.BLOCKS in roles:
            self.scheduleDelayedItemsLayout()

    @Slot(int)
    def _on_scroll_value_changed(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._stick_to_bottom = value >= bar.maximum() - AT_BOTTOM_PX
        # Within a screen of the oldest row loaded, the next older ones load: they are
        # there before the reader reaches the top (0: not laid out yet)
        if value <= bar.pageStep() + NEAR_TOP_PX and bar.maximum() > 0:
            self._load_older()

    @Slot(int, int)
    def _on_scroll_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._stick_to_bottom:
            self.verticalScrollBar().setValue(maximum)

    def _load_older(self) -> None:
        model = self.model()
        if not isinstance(model, MessageListModel) or not model.has_older():
            return
        if self._loading_older:  # one page a step: the next step asks for the next
            return
        bar = self.verticalScrollBar()
        before_max, before_value = bar.maximum(), bar.value()
        self._loading_older = True
        try:
            model.load_older()
            self.doItemsLayout()  # measure the new rows now: the reader stays where they were
            bar.setValue(before_value + bar.maximum() - before_max)
        finally:
            self._loading_older = False

    def _sent_tokens(self, message: Message) -> int:
        """What this message costs in the next request (its chips' sent tokens)."""
        model = self.model()
        if not isinstance(model, MessageListModel):
            return 0
        row = model.row_of(message.id)
        if row is None:
            return 0
        return sum(chip.sent for chip in model.index(row).data(Role.BLOCKS) or ())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_F10 and event.modifiers() == Qt.KeyboardModifier.ShiftModifier:
            # Shift+F10, as the Menu key (Qt maps only the latter on X11)
            where = self.visualRect(self.currentIndex()).topLeft()
            self.contextMenuEvent(
                QContextMenuEvent(QContextMenuEvent.Reason.Keyboard, where, self.mapToGlobal(where))
            )
            return
        alt = event.modifiers() == Qt.KeyboardModifier.AltModifier
        if alt and event.key() in (Qt.Key.Key_Left, Qt.Key.Key_Right):
            self._step_version(self.currentIndex(), -1 if event.key() == Qt.Key.Key_Left else 1)
            return
        super().keyPressEvent(event)

    def _step_version(self, index: QModelIndex | QPersistentModelIndex, step: int) -> None:
        """The previous or next version of the focused message, if it has others."""
        siblings = index.data(Role.SIBLINGS) if index.isValid() else None
        if siblings is not None and 0 <= siblings.index + step < len(siblings.ids):
            self.branch_requested.emit(siblings.ids[siblings.index + step])

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        """The message's actions: where the mouse is, or — from the keyboard (the Menu
        key, Shift+F10) — for the focused message, under its header."""
        keyboard = event.reason() == QContextMenuEvent.Reason.Keyboard
        index = self.currentIndex() if keyboard else self.indexAt(event.pos())
        if not index.isValid():
            return
        self.setCurrentIndex(index)
        self.scrollTo(index)
        message: Message = index.data(Role.MESSAGE)
        where = self.visualRect(index).topLeft() + QPoint(24, 24)
        self.menu_for(message).exec(
            self.viewport().mapToGlobal(where) if keyboard else event.globalPos()
        )

    def actions_for(self, message: Message) -> list[MessageAction]:
        """What can be done to a message: the menu and the hover bar show these."""
        actions = [
            MessageAction(
                "copy",
                "Copy",
                "Copy",
                lambda: QGuiApplication.clipboard().setText(_plain(message)),
            )
        ]
        if self.is_excluded(message):
            actions.append(
                MessageAction(
                    "exclude",
                    "Include",
                    "Include in context",
                    lambda: self.exclude_toggled.emit(message),
                )
            )
        else:
            sent = self._sent_tokens(message)
            label = f"Exclude from context (−≈{sent:,} tokens)" if sent else "Exclude from context"
            actions.append(
                MessageAction(
                    "exclude", "Exclude", label, lambda: self.exclude_toggled.emit(message)
                )
            )
        actions.append(
            MessageAction(
                "pin", "Pin", "Pin text as a fact…", lambda: self.pin_requested.emit(message)
            )
        )
        actions.append(
            MessageAction(
                "fork",
                "Fork",
                "Fork a new chat from here",
                lambda: self.fork_requested.emit(message),
            )
        )
        if message.role == "user" and not message.is_tool_results:
            actions.append(
                MessageAction(
                    "edit",
                    "Edit",
                    "Edit (sends a new version beside this one)",
                    lambda: self.edit_requested.emit(message),
                )
            )
        if message.role == "assistant" and message.status in (
            MessageStatus.ERROR,
            MessageStatus.INTERRUPTED,
        ):
            actions.append(
                MessageAction("retry", "Retry", "Retry", lambda: self.retry_requested.emit(message))
            )
        elif message.role == "assistant" and message.status is MessageStatus.COMPLETE:
            actions.append(
                MessageAction(
                    "regenerate",
                    "Regenerate",
                    "Regenerate (a new version beside this reply)",
                    lambda: self.regenerate_requested.emit(message),
                )
            )
        return actions

    def menu_for(self, message: Message) -> QMenu:
        menu = QMenu(self)
        for action in self.actions_for(message):
            if action.key == "fork":
                menu.addSeparator()
            menu.addAction(action.label, action.run)
        if message.text.strip():  # (the menu only: the hover bar keeps its few)
            menu.addSeparator()
            menu.addAction(
                "In which requests was it sent?", lambda: self.trace_requested.emit(message)
            )
        return menu

    # -- the hover bar ----------------------------------------------------------------------

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:  # the scrollbar came or went (or the window)
            taken = self.width() - self.viewport().width() - 2 * self.frameWidth()
            if taken != self._scrollbar_width:
                self._scrollbar_width = taken
                self.scrollbar_width_changed.emit(taken)
        if event.type() == QEvent.Type.HoverMove and isinstance(event, QHoverEvent):
            self._pointer = event.position().toPoint()
            index = self.indexAt(self._pointer)
            self._show_actions(index)
            self._show_link_cursor(index, event.position())
        elif event.type() == QEvent.Type.HoverLeave:
            self._pointer = None
            self._show_actions(self.currentIndex() if self.hasFocus() else QModelIndex())
        return super().viewportEvent(event)

    def currentChanged(
        self,
        current: QModelIndex | QPersistentModelIndex,
        previous: QModelIndex | QPersistentModelIndex,
    ) -> None:
        super().currentChanged(current, previous)
        if self.hasFocus():  # the keyboard's message gets its actions too
            self._show_actions(current)

    def doItemsLayout(self) -> None:
        # Every row is measured in one go: what all rows share is worked out once for
        # the pass, not once a row (a streaming reply lays every loaded row out again).
        with self.delegate.layout_pass(self.font()):
            super().doItemsLayout()

    def updateGeometries(self) -> None:
        super().updateGeometries()
        if hasattr(self, "hover_bar"):  # (Qt lays out once while __init__ is running)
            self.refresh_actions()  # laid out again (a divider came, Context view): follow it

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        self.hover_bar.hide()  # it shows again where the mouse or the focus next is

    @Slot(str)
    def _on_delegate_show_all_requested(self, message_id: str) -> None:
        """A message too long to lay out whole, in a viewer of its own."""
        from desktop_app.ui.dialogs.text_viewer import show_text

        model = self.model()
        if not isinstance(model, MessageListModel):
            return
        row = model.row_of(message_id)
        if row is not None:
            message = model.message_at(row)
            show_text(self.window(), f"{speaker(message)}'s message, whole", message.text)

    def _show_link_cursor(self, index: QModelIndex | QPersistentModelIndex, pos: QPointF) -> None:
        """A pointing hand over a link (a click opens it in the browser)."""
        option = QStyleOptionViewItem()
        option.rect = self.visualRect(index)
        option.font = self.font()
        over_link = index.isValid() and bool(self.delegate.link_at(index, option, pos))
        shape = Qt.CursorShape.PointingHandCursor if over_link else Qt.CursorShape.ArrowCursor
        if self.viewport().cursor().shape() != shape:
            self.viewport().setCursor(shape)

    def refresh_actions(self) -> None:
        """The rows moved or a message's actions changed (a branch switch, a jump, an
        exclusion): the bar goes to the message under the mouse now — or, with no mouse
        over the messages, the keyboard's — never staying on one the pointer has left."""
        if not self.hover_bar.isVisible():
            return
        if self._pointer is not None:
            self._show_actions(self.indexAt(self._pointer))
        else:
            self._show_actions(self.currentIndex() if self.hasFocus() else QModelIndex())

    def _show_actions(self, index: QModelIndex | QPersistentModelIndex) -> None:
        if not index.isValid():
            self.hover_bar.hide()
            return
        message: Message = index.data(Role.MESSAGE)
        if message.status is MessageStatus.STREAMING:
            self.hover_bar.hide()
            return
        option = QStyleOptionViewItem()
        option.rect = self.visualRect(index)
        option.font = self.font()
        self.hover_bar.show_for(
            message.id,
            self.actions_for(message),
            lambda width: self.delegate.actions_spot(index, option, width),
        )


def _plain(message: Message) -> str:
    """What Copy puts on the clipboard: the text, or a tool call's name and input."""
    if message.text:
        return message.text
    parts = []
    for block in message.blocks:
        if isinstance(block, ToolUseBlock):
            parts.append(f"{block.name} {block.input}")
        elif isinstance(block, ToolResultBlock) and isinstance(block.content, str):
            parts.append(block.content)
    return "\n\n".join(parts)

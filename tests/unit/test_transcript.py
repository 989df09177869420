"""The transcript is append-only: edits and deletions keep what was there."""

from __future__ import annotations

import pytest

from desktop_app.core.blocks import TextBlock
from desktop_app.core.messages import MessageStatus
from desktop_app.core.transcript import Transcript, TranscriptError
from tests.unit.builders import a, u


def test_append_and_read_in_order() -> None:
    first, second = u("hi"), a("hello")
    transcript = Transcript([first, second])
    assert transcript.messages() == (first, second)
    assert len(transcript) == 2
    assert first.id in transcript


def test_an_id_cannot_be_added_twice() -> None:
    msg = u("hi")
    transcript = Transcript([msg])
    with pytest.raises(TranscriptError, match="already in the transcript"):
        transcript.append(msg)


def test_edit_adds_a_revision_and_keeps_the_original() -> None:
    msg = u("teh typo")
    transcript = Transcript([msg])
    edited = transcript.edit(msg.id, (TextBlock("the typo"),))
    assert edited.revision == 1
    assert transcript.messages() == (edited,)
    assert transcript.revisions(msg.id) == (msg, edited)


def test_delete_hides_and_restore_brings_back() -> None:
    keep, gone = u("keep"), a("gone")
    transcript = Transcript([keep, gone])
    transcript.delete(gone.id)
    assert transcript.messages() == (keep,)
    assert transcript.is_deleted(gone.id)
    assert transcript.get(gone.id) == gone  # still readable
    transcript.restore(gone.id)
    assert transcript.messages() == (keep, gone)


def test_replace_current_finishes_a_streaming_message_without_a_new_revision() -> None:
    from dataclasses import replace

    streaming = replace(a("partial"), status=MessageStatus.STREAMING)
    transcript = Transcript([u("q"), streaming])
    done = transcript.replace_current(
        replace(streaming, blocks=(TextBlock("partial and more"),), status=MessageStatus.COMPLETE)
    )
    assert done.revision == 0
    assert transcript.revisions(streaming.id) == (done,)


def test_unknown_ids_are_clear_errors() -> None:
    transcript = Transcript()
    for operation in (transcript.get, transcript.delete, transcript.restore, transcript.revisions):
        with pytest.raises(TranscriptError, match="no message nope"):
            operation("nope")

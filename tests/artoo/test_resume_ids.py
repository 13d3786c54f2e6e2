"""The resume's id map (pure): the ids the rebuilt roles generate are read off each
replayed message beside its recorded twin, and what the task publishes after is logged
with the recorded ids."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from artoo._resume import Resumer
from artoo.replay._read import TaskLog
from artoo.schemas import ConfirmationRequest, Envelope, UserRequest

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ULID = st.text(alphabet=_CROCKFORD, min_size=26, max_size=26)


def _resume(recorded: ConfirmationRequest) -> Resumer:
    resumer = Resumer()
    log = [
        Envelope(1, 1.0, "T", "host", None, None, UserRequest(text="x")),
        Envelope(2, 2.0, "T", "executor/pair-0", None, None, recorded),
    ]
    resumer.add(TaskLog("T", log), now=10.0)
    return resumer


@given(
    old=st.lists(ULID, min_size=2, max_size=2, unique=True),
    new=st.lists(ULID, min_size=2, max_size=2, unique=True),
)
def test_ids_learned_from_a_replayed_message_translate_what_follows(
    old: list[str], new: list[str]
) -> None:
    if set(old) & set(new):
        return
    recorded = ConfirmationRequest(request_id=old[0], action=f"rm {old[1]}.log", reason="r")
    resumer = _resume(recorded)
    replayed = resumer.route(
        "T",
        "executor/pair-0",
        None,
        None,
        ConfirmationRequest(request_id=new[0], action=f"rm {new[1]}.log", reason="r"),
    )
    assert type(replayed).__name__ == "Replayed"
    assert replayed.envelope is not None and replayed.envelope.seq == 2  # type: ignore[union-attr]
    assert replayed.envelope.ts == 2.0 + 8.0  # type: ignore[union-attr]  # shifted by the stop
    # the next message of that sender is not in the log: logged with the recorded ids
    later = resumer.route(
        "T",
        "executor/pair-0",
        None,
        None,
        ConfirmationRequest(request_id=new[0], action=f"again {new[1]}", reason="r"),
    )
    assert later is not None
    assert later.logged == ConfirmationRequest(  # type: ignore[union-attr]
        request_id=old[0], action=f"again {old[1]}", reason="r"
    )
    assert later.delivered is None  # type: ignore[union-attr]  # delivered as published


def test_a_message_the_log_does_not_hold_in_that_place_parts_the_resume() -> None:
    recorded = ConfirmationRequest(request_id="A" * 26, action="rm x", reason="r")
    resumer = _resume(recorded)
    # the sender's next recorded message is a ConfirmationRequest: a UserRequest there parts
    assert resumer.route("T", "executor/pair-0", None, None, UserRequest(text="y")) is None
    assert resumer.tasks["T"].parted
    # from then on nothing is matched: the recorded request is logged as published
    assert resumer.route("T", "executor/pair-0", None, None, recorded) is None

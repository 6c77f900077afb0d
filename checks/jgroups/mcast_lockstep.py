"""The multicast world (``models/multicast_world.py``) in lockstep with JGroups: how each of its
actions becomes one harness command, and what NAKACK2's and NAKACK4's bindings share (their common
messages and windows read from the harness).

``lockstep.JGroupsLockstep`` does the rest, as for the point-to-point world (rules 1 to 5 there):
the packets a member sent compared as multisets, its deliveries in order, its state mapped to the
spec's node. The world's rules and how the harness keeps them:

- rule 2, a multicast is one packet per member of the sender's view, its own copy included: the
  harness captures JGroups' multicast as one packet per member of the protocol's ``members``
  (``NakackModel.multicastTargets``), without the sender's own when it is DONT_LOOPBACK;
- rule 4, ``DropBelow``: the copy is dropped, as a loss (nothing of it reaches the protocol);
- rule 5, ``AnswerJoin``: the harness's GMS (``Gms.java``) takes the join digest at the coordinator,
  installs its view, and sends the JoinRsp as a packet; delivering it is SET_DIGEST and the view at
  the joiner; BECOME_SERVER is the spec's timer;
- rule 8, ``Stop``: the member acts no more; packets delivered to it are discarded;
- rule 10, ``MergeView``: MERGE_DIGEST with each member of the view at its own window's (hd, hr) as
  JGroups reports it at that moment, then the view;
- rule 11, ``DeliverBatch``: one copy of each packet handed up, in the batch's order, as one
  ``MessageBatch`` (the harness's ``batch``, by reflection), the other copies gone.
"""

from __future__ import annotations

from typing import Any

from impl.common import payload_number, spec_payload
from models.multicast_world import AnswerJoin, AppMcast, DropBelow, MergeView, Stop
from models.world import DeliverBatch, DeliverPacket, DuplicatePacket, FireTimer, InstallView, LosePacket
from spec import nakack2_state as n2


def drive(run: Any, action: Any, before: Any, member: int | None) -> dict[str, Any]:
    """One multicast-world action as one harness command (``JGroupsBinding.drive``)."""
    command, world = run.harness.command, run.world
    if isinstance(action, AppMcast):
        number = world.app_payload(before, action)
        flagged = (action.src, number) in getattr(world.bounds, "dont_loopback", ())  # per send (NAKACK2)
        extra = {"dont_loopback": True} if flagged else {}
        if (action.src, number) in world.bounds.oob:  # the model's [oob] table (world rule 6)
            extra["oob"] = True
        return command("send", m=action.src, dst=-1, payload=spec_payload(number).hex(), state=True, **extra)
    if isinstance(action, DeliverPacket):
        ids = run.inflight.pop(action.packet)
        return command("deliver", id=ids[0], discard=ids[1:], m=action.packet.dst, state=True)
    if isinstance(action, DeliverBatch):  # one copy of each packet up as a MessageBatch, the others gone
        copies = [run.inflight.pop(packet) for packet in action.packets]
        return command("batch", ids=[ids[0] for ids in copies], discard=[i for ids in copies for i in ids[1:]],
                       m=action.packets[0].dst, state=True)
    if isinstance(action, DuplicatePacket):
        return command("copy", id=run.inflight[action.packet][0], m=action.packet.dst, state=True)
    if isinstance(action, (LosePacket, DropBelow)):
        return command("drop", ids=run.inflight.pop(action.packet))
    if isinstance(action, FireTimer):
        kind, peer = run.binding.timer(action.timer)
        return command("timer", m=action.member, kind=kind, peer=-1 if peer is None else peer, state=True)
    if isinstance(action, InstallView):
        return command("view", m=action.member, members=list(action.members), state=True)
    if isinstance(action, AnswerJoin):
        view = world.next_view(world.view(before).env, action.coordinator)
        return command("join", m=action.coordinator, joiner=action.joiner, members=sorted(view), state=True)
    if isinstance(action, MergeView):
        return command("merge", m=action.member, members=list(action.members), state=True)
    assert isinstance(action, Stop), action
    return command("stop", m=action.member)


# -- what the bindings share ------------------------------------------------------------------------
def payload(hex_text: str) -> int:
    return payload_number(bytes.fromhex(hex_text))


def common_message(m: dict[str, Any], n: int) -> Any:
    """MSG, XMIT_REQ, XMIT_RSP, HIGHEST_SEQNO and GMS's JoinRsp as the specs' values (None: another type)."""
    kind = m["type"]
    if kind == "MSG":
        return n2.Data(m["seqno"], payload(m["payload"]), bool(m.get("oob", False)))
    if kind == "XMIT_REQ":
        return n2.XmitReq(m["sender"], tuple(m["seqnos"]))
    if kind == "XMIT_RSP":
        return n2.XmitRsp(m["sender"], m["seqno"], payload(m["payload"]), bool(m.get("oob", False)))
    if kind == "HIGHEST_SEQNO":
        return n2.HighestSeqno(m["seqno"])
    if kind == "JOIN_RSP":
        return n2.JoinRsp(tuple(m["view"]), digest(m["digest"], m.get("n", n)))
    return None


def digest(entries: dict[str, list[int]], n: int) -> n2.Digest:
    return tuple((entries[str(p)][0], entries[str(p)][1]) if str(p) in entries else None for p in range(n))


def per_member(table: dict[str, Any], n: int, missing: Any) -> tuple[Any, ...]:
    """A harness map keyed by member index as the spec's tuple (``missing`` where it has no key)."""
    return tuple(table.get(str(p), missing) for p in range(n))


def data_items(items: list[Any], first: int = 0) -> tuple[Any, ...]:
    """Stored messages (MSG) of a window whose first slot is seqno ``first``, None for a gap; a slot
    holding DUMMY_OOB_MSG is the specs' placeholder (payload 0, OOB: spec/nakack2.py decision 17)."""
    return tuple(None if m is None else n2.Data(first + i, 0, True) if m["type"] == "OOB_PLACEHOLDER"
                 else n2.Data(m["seqno"], payload(m["payload"]), bool(m.get("oob", False)))
                 for i, m in enumerate(items))

"""UNICAST3's messages to self (decisions 26 and 27 of ``spec/unicast3.py``): a member's DATA to
itself, and its DONT_LOOPBACK messages to itself.

26. A send to oneself goes through the send entry for oneself like any other (a seqno, stored, sent
    with its header; the transport loops it back), but the receiving side has no receive entry.
    JGroups' ``UNICAST3.up`` hands a DATA whose sender is the local address to
    ``handleDataReceivedFromSelf`` (3.6 on; 5.x's ``ReliableUnicast`` the same), which works on the
    *send* entry::

        Entry entry=send_table.get(sender);
        if(entry == null || entry.state() == State.CLOSED) { log.warn(...); return; }
        update(entry, 1);                       // CLOSING -> OPEN
        if(msg.isFlagSet(OOB)) {
            msg=win.get(seqno);                 // loopback means we didn't add it to win
            if(msg != null && msg.isFlagSet(OOB) && msg.setFlagIfAbsent(OOB_DELIVERED))
                deliverMessage(msg, sender, seqno);
        }
        removeAndDeliver(win, sender, null, 1);

    No conn_id is compared: a DATA of an older connection to self drains the current one. The send
    window holds every message from HA + 1 to HS (each was added when sent), so ``removeAndDeliver``
    finds no gap: it delivers all of them in seqno order and removes them, so HA := HS. Its filter
    (``drop_oob_and_dont_loopback_msgs_filter``) skips an OOB message already delivered and sets the
    flag on one that is not, which it delivers in line. So a DATA to self delivers everything sent
    to self before it, even messages whose own loopback has not arrived (a later copy finds its slot
    empty: ``win.get`` returns null); nothing acknowledges it (no ACK: HA moves by delivery, so the
    HS resend of decision 11 stops); a lost loopback of the last message comes back by that resend.
    An OOB mark never outlives the handler (the drain removes every stored message), so the state
    needs none.
    The send entry for oneself is the delivery window too: its creation (``on_send``) starts a new
    incarnation of the channel to oneself, as a receive window's does (``WindowCreated``).
    Variant ``self_as_peer`` (3.4.x, which has no such path): the member is its own peer, with a
    receive entry for itself and ACKs to itself, as for any other sender.

27. DONT_LOOPBACK to self (``UNICAST3.down``, 3.6.20 to master alike): the message takes a seqno and
    is stored with ``msgs.add(seqno, msg, dont_loopback_filter)``, then ``msgs.purge(
    msgs.getHighestDeliverable())``; the transport never loops a DONT_LOOPBACK message back (3.6's
    ``TP.send``: ``loop_back=... && !DONT_LOOPBACK``; 5.x's ``BaseBundler.loopbackUnlessDontLoopbackIsSet``),
    nor the HS resend's copy of it (the stored message, flag and all). So the spec sends nothing for
    it. The add's filter moves hd over the run of DONT_LOOPBACK messages from hd + 1 (5.x's filter
    also passes DUMMY_OOB_MSG and OOB_DELIVERED, which a UNICAST3 send window for oneself never
    holds between handlers: every drain takes the whole window), and the purge (capped at hd)
    moves low to it: stored right above everything delivered, the message is removed at once,
    undelivered; stored above a message whose loopback is still to come, it waits for that
    loopback's drain (``drop_oob_and_dont_loopback_msgs_filter``), which removes it undelivered. As
    the highest sent message it is what the HS resend sends, and the transport drops that copy too:
    if the loopback of an earlier message was lost, nothing brings it back until the next message to
    oneself that is looped back (a JGroups finding: ``models/unicast3/dont-loopback-lost-loopback.toml``;
    UNICAST4's decision 13 is the same). 3.4.x has no DONT_LOOPBACK: with ``self_as_peer`` the flag
    is ignored.
"""

from __future__ import annotations

from dataclasses import replace

from spec.effects import Deliver, Effect, Purged
from spec.unicast3_state import OPEN, Config, Data, Node, SendEntry, Step, set_peer


def on_data_from_self(cfg: Config, node: Node, msg: Data) -> Step:
    """DATA from oneself (decision 26): deliver what the send window for oneself holds."""
    me = node.me
    entry = node.send[me]
    if entry is None:
        return Step(node, ())
    effects: list[Effect] = []
    early = msg.oob and entry.acked < msg.seqno <= entry.highest_sent and msg.seqno in entry.oob
    if early:  # OOB: delivered at once (it is in the window, so not yet delivered)
        effects.append(Deliver(me, entry.unacked[msg.seqno - entry.acked - 1]))
    for seqno in range(entry.acked + 1, entry.highest_sent + 1):  # removeAndDeliver: no gap
        if not (early and seqno == msg.seqno) and seqno not in entry.dont_loopback:  # decision 27
            effects.append(Deliver(me, entry.unacked[seqno - entry.acked - 1]))
    if entry.unacked:
        effects.append(Purged(me, entry.conn_id, entry.highest_sent))
    entry = replace(entry, state=OPEN, acked=entry.highest_sent, unacked=(), oob=frozenset(),
                    dont_loopback=frozenset())
    return Step(replace(node, send=set_peer(node.send, me, entry)), tuple(effects))


def dont_loopback_added(node: Node, entry: SendEntry) -> tuple[SendEntry, tuple[Effect, ...]]:
    """The DONT_LOOPBACK add's filter and purge (decision 27): low moves over the DONT_LOOPBACK
    messages from acked + 1 on (removed undelivered)."""
    upto = entry.acked
    while upto < entry.highest_sent and upto + 1 in entry.dont_loopback:
        upto += 1
    if upto == entry.acked:
        return entry, ()
    entry = replace(entry, acked=upto, unacked=entry.unacked[upto - entry.acked:],
                    oob=frozenset(s for s in entry.oob if s > upto) if entry.oob else entry.oob,
                    dont_loopback=frozenset(s for s in entry.dont_loopback if s > upto))
    return entry, (Purged(node.me, entry.conn_id, upto),)

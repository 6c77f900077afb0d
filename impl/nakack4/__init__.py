"""The production NAKACK4 engine: JGroups' ReliableMulticast over FixedBuffer (fixed windows, ACK
counting, blocking senders), sans-IO, behaving like ``spec/nakack4.py`` message for message.

Public API: ``Nakack4Engine`` (``engine.py``), its ``Config``/``Variant`` (``config.py``, JGroups'
defaults: capacity 16384, ack_threshold capacity/4, xmit_interval 1000, become_server_queue_size
50, send_atomically off), ``SendStatus`` and the abstract state ``EngineView``/``WindowView``
(``snapshot.py``). The wire format is ``codec.py`` (NAKACK2's messages plus ACK, magic 0x34).
Windows are ``impl/fixed_window.FixedBuffer``.

Blocking, sans-IO: JGroups' application thread blocks inside ``FixedBuffer.add`` while its seqno is
more than ``capacity`` above the own window's low. ``multicast`` never blocks: it returns
(seqno, ``SendStatus``), and a send that cannot be added now is *held* with its seqno taken
(``BLOCKED``), as the spec holds a blocked thread in ``Node.sending``. The engine passes held
sends down by itself, in seqno order, at the end of the input whose ACKs (or view) purged the own
window (``Config.resume_blocked_sends``), and reports each in ``send_events()`` (SENT, or DROPPED
by DISCONNECT or variant drop_dont_block). With send_atomically off (JGroups' default) taking the
seqno and the add are the spec's two steps; the engine does the second at once when there is room
(one application thread per call: the spec's schedule where the SEND timer fires right away). The
lockstep harness turns resumption off and fires the spec's ``Timer(SEND, seqno)`` itself
(``fire_timer``), so any interleaving of concurrent senders the spec explores is reproduced.

Departures from the spec (each on hostile input or at a limit no model reaches):

- Limits (``Config``): ``max_pending_sends`` held sends (then ``SendWindowFull``: the spec's
  ``sender_threads`` bounds the threads inside send); ``max_xmit_served`` messages served per
  XMIT_REQ, and what one peer's datagrams make the engine resend bounded by ``resend_factor`` and
  ``max_resend_bytes`` (``impl.common.ResendBudget``, every copy of a re-multicast counted);
  ``max_queue_bytes`` in the become_server_queue; ``max_members`` in views and digests, and no more
  members than ``max_window_bytes`` of window slots (``member_limit``); a
  retransmit run scans at most ``max_xmit_req_size`` seqnos per window for gaps (JGroups'
  max_xmit_req_size; the spec asks for every gap; a window holds at most ``capacity`` anyway).
- With ``use_mcast_xmit`` an XMIT_REQ for another sender's messages is dropped, and an XMIT_RSP
  is accepted only from the sender it names (the spec always asks the original sender).
- A digest's entry for the member itself creates its own window at its counter (the spec: at the
  entry's hd; a coordinator always names a joiner at (0, 0), where its counter is); a JOIN_RSP
  naming addresses of another kind than the member's is ignored.
- Seqnos are 0 .. 2**63 - 1 (``impl/fixed_window``'s MAX_SEQNO): the counter refuses to pass it.
- The delivery fault of JGRP-3034 (``inject_delivery_fault``, the spec's DELIVER_FAULT timer) is
  allowed only with ``deliver_exceptions``; the engine itself never throws while delivering.

Not modelled, as in the spec: OOB, message batches, dynamic buffers, STABLE (NAKACK4 ignores it).
"""

from impl.common import LocalProtocolError, ProtocolError, SendWindowFull
from impl.nakack4.config import Config, Variant
from impl.nakack4.engine import Nakack4Engine
from impl.nakack4.snapshot import EngineView, WindowView
from impl.nakack4.state import SendStatus, Stats

__all__ = [
    "Config",
    "EngineView",
    "LocalProtocolError",
    "Nakack4Engine",
    "ProtocolError",
    "SendStatus",
    "SendWindowFull",
    "Stats",
    "Variant",
    "WindowView",
]

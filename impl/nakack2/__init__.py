"""NAKACK2 as a sans-IO engine: reliable, per-sender FIFO multicast by negative acknowledgement,
with STABLE's purging, joins (the join digest and the become_server_queue) and the
no-retransmission mode of seed 004 (``xmit_interval <= 0``).

Start with ``engine.Nakack2Engine``. Modules: ``config`` (Config, Variant, defaults, validation),
``codec`` (the wire format), ``state`` (one member's data and shared helpers), ``receive``
(message handlers), ``stable`` (STABLE's round and NAKACK2.stable), ``membership`` (views, joins,
digests), ``tasks`` (retransmit task, LastSeqnoResender, BECOME_SERVER, the spec's timers),
``snapshot`` (the abstract view shared with the spec).

The engine behaves like ``spec/nakack2.py`` message for message. It departs only where the spec
is abstract or silent:

- Timers are real durations from ``now`` (int ms): the spec's XMIT is a retransmit run every
  ``xmit_interval`` (none when it is <= 0); STABLE's gossip runs every ``stable_interval`` (JGroups
  randomises it around desired_avg_gossip); BECOME_SERVER is the call ``become_server`` (GMS's
  event). ``fire_timer`` fires any of the spec's timers on demand, for the lockstep harness.
- Addresses are ints or strings (they go on the wire); the coordinator of a view is its first
  member in ``codec.address_key`` order (the spec's lowest member number; JGroups' is the view's
  first member, which GMS keeps in join order).
- A retransmit run asks for the gaps among the first ``max_xmit_req_size`` (1024, JGroups')
  seqnos above a window's highest deliverable one, and scans at most ``max_xmit_scan`` seqnos
  over all windows (round robin, ``impl.common.request_missing``); the spec's windows are far
  smaller than both (its decision 5).
- Seqnos live in 0 .. 2**63 - 1 (the wire's c-long); they never wrap: a member would need 2**63
  multicasts.
- Hostile input (``Config``'s limits, counted in ``stats`` and dropped): the window span and the
  bytes held undelivered, the queue's bytes, views and digests of at most ``max_members``, the
  answer to an XMIT_REQ bounded in messages and in bytes (``resend_factor``, ``max_resend_bytes``,
  every copy of a re-multicast counted), an XMIT_REQ for another sender's messages with
  ``use_mcast_xmit`` dropped, an XMIT_RSP accepted only from the sender it names and a STABILITY
  only from its view's coordinator (no honest one is refused: the spec sends no other), a
  digest's entry for the member itself not moving its own window (``membership``), and a JOIN_RSP
  naming addresses of another kind dropped. Each is a departure from the spec on hostile input
  only. ``max_send_window`` and ``max_send_bytes`` bound the own window (``SendWindowFull``:
  back-pressure when a member that never votes stalls STABLE; JGroups' own window is unbounded).
"""

from impl.common import LocalProtocolError, ProtocolError, SendWindowFull
from impl.nakack2.config import Config, Variant
from impl.nakack2.engine import Nakack2Engine
from impl.nakack2.snapshot import EngineView, WindowView, payload_number, spec_payload
from impl.nakack2.state import Stats

__all__ = [
    "Config",
    "EngineView",
    "LocalProtocolError",
    "Nakack2Engine",
    "ProtocolError",
    "SendWindowFull",
    "Stats",
    "Variant",
    "WindowView",
    "payload_number",
    "spec_payload",
]

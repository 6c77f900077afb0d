"""UNICAST3 as a sans-IO engine: reliable, FIFO, exactly-once-per-connection unicast.

Start with ``engine.Unicast3Engine``. Modules: ``config`` (Config, defaults, validation),
``entries`` (connection entries, life-cycle table, wrap-around counters, errors), ``state``
(one member's data and shared helpers), ``cache`` (the message cache, JGRP-2327), ``receive``
(message handlers), ``tasks`` (retransmit task, idle closing, expiry, views, hooks), ``snapshot``
(abstract views shared with the spec).

The engine behaves like ``spec/unicast3.py`` message for message. It departs only where the spec
is abstract or silent:

- Timers are real durations from ``now`` (int ms): the spec's XMIT is a retransmit run every
  xmit_interval; IDLE_* / CLOSE_* fire for entries whose age reached conn_expiry_timeout /
  conn_close_timeout, checked on those runs; SYNC_EXPIRED is sync_min_interval after a request
  (checked lazily, like JGroups' ExpiryCache). ``fire_timer`` fires a spec timer on demand.
- Counters wrap like the wire format requires: timestamps in 1 .. 2**31 - 1 with serial-number
  comparison, conn_ids in 0 .. 32767.
- Hostile-input limits (``Config``): far above what a conforming peer needs; each one that bites
  drops the input and counts it in ``stats``.
- Optional AgeOutCache (``max_retransmit_time``, off by default; the spec leaves it out).
"""

from impl.unicast3.config import Config, Variant
from impl.unicast3.engine import Unicast3Engine
from impl.unicast3.entries import (
    ConnState,
    LocalProtocolError,
    ProtocolError,
    SendWindowFull,
)
from impl.unicast3.snapshot import (
    EngineView,
    RecvView,
    SendView,
    payload_number,
    spec_payload,
)
from impl.unicast3.state import Stats

__all__ = [
    "Config",
    "ConnState",
    "EngineView",
    "LocalProtocolError",
    "ProtocolError",
    "RecvView",
    "SendView",
    "SendWindowFull",
    "Stats",
    "Unicast3Engine",
    "Variant",
    "payload_number",
    "spec_payload",
]

"""UNICAST2 as a sans-IO engine: reliable FIFO unicast by negative acknowledgement and STABLE.

Start with ``engine.Unicast2Engine``. Modules: ``config`` (Config, defaults, validation), ``codec``
(the UNICAST2 wire format, on ``impl/wire.py``), ``state`` (entries, one member's data and shared
helpers), ``receive`` (message handlers), ``tasks`` (retransmit and stable tasks, the reaper, views,
the hook), ``snapshot`` (abstract views shared with the spec). The window is ``impl.window.Table``;
errors, counters and the payload mapping are ``impl/common.py``'s, shared with UNICAST3.

The engine behaves like ``spec/unicast2.py`` message for message, byte for byte; the variants are
the spec's own ``Variant`` flags. It departs only where the spec is abstract or silent:

- Timers are real durations from ``now`` (int ms): the spec's XMIT is a retransmit run every
  xmit_interval (1000), STABLE a stable-task run every stable_interval (60000); IDLE_SEND /
  IDLE_RECV fire for entries idle for conn_expiry_timeout, checked by the reaper every
  conn_expiry_timeout (0, the default, disables it). ``fire_timer`` fires a spec timer on demand.
- JGroups' byte-triggered STABLE (max_bytes, 10 MB) exists; the spec leaves it out (decision 7),
  so the lockstep harness sets max_bytes = 0.
- Counters wrap like the wire format requires: timestamps (fix_timestamps only) in 1 .. 2**31 - 1
  with serial-number comparison, conn_ids in 0 .. 32767.
- Hostile-input limits (``Config``): far above what a conforming peer needs; each one that bites
  drops the input (or the excess resends) and counts it in ``stats``.
- Optional AgeOutCache (``max_retransmit_time``, off by default; the spec leaves it out).
"""

from impl.common import LocalProtocolError, ProtocolError, SendWindowFull, payload_number, spec_payload
from impl.unicast2.config import Config, Variant
from impl.unicast2.engine import Unicast2Engine
from impl.unicast2.snapshot import EngineView, RecvView, SendView
from impl.unicast2.state import Stats

__all__ = [
    "Config",
    "EngineView",
    "LocalProtocolError",
    "ProtocolError",
    "RecvView",
    "SendView",
    "SendWindowFull",
    "Stats",
    "Unicast2Engine",
    "Variant",
    "payload_number",
    "spec_payload",
]

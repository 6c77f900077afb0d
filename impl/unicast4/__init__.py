"""UNICAST4 as a sans-IO engine: JGroups' ReliableUnicast over fixed windows (``impl/fixed_window.py``,
shared with NAKACK4).

Start with ``engine.Unicast4Engine``. Modules: ``config`` (Config, defaults, validation),
``codec`` (UNICAST3's wire format under a magic of its own), ``state`` (one member's data,
entries, shared helpers), ``receive`` (the application's send and the message handlers),
``tasks`` (retransmit task, idle closing, expiry, views, hooks, the spec's timers), ``snapshot``
(abstract views shared with the spec).

The engine behaves like ``spec/unicast4.py`` message for message. It departs only where the spec
is abstract: timers are real durations from ``now``; a blocked send is held and resumed by the
engine itself (``Config.resume_blocked_sends``); counters wrap as the wire requires (timestamps
in 31 bits with serial comparison, conn_ids in 0..32767); the hostile-input limits of ``Config``.
"""

from impl.unicast4.codec import MAGIC
from impl.unicast4.config import Config, Variant
from impl.unicast4.engine import Unicast4Engine
from impl.unicast4.snapshot import EngineView, RecvView, SendView
from impl.unicast4.state import SendStatus, Stats

__all__ = ["MAGIC", "Config", "EngineView", "RecvView", "SendStatus", "SendView", "Stats", "Unicast4Engine",
           "Variant"]

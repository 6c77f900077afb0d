"""The network runtime: the sans-IO engines carrying real traffic over asyncio UDP.

Start with ``endpoint.Endpoint`` (one engine on a socket: ``async with``, ``await send``,
``async for``, membership calls). ``link.Link`` is a fault-injecting relay between endpoints
(seeded loss, duplication, reordering, partitions, switchable while running); ``group.LocalGroup``
puts n endpoints and a link in one event loop (tests, benchmarks). ``drivers`` holds what differs
per engine; ``eventlog`` the JSON-lines log ``seqcheck validate`` reads. The engines stay sans-IO:
this package is the only place that touches sockets and clocks.
"""

from impl.runtime.drivers import PROTOCOLS, SendFailed, loopback_config
from impl.runtime.endpoint import Endpoint, EndpointClosed, EndpointLimits, EndpointStats
from impl.runtime.eventlog import FORMAT as LOG_FORMAT
from impl.runtime.link import Delay, Faults, Link, LinkStats

__all__ = [
    "LOG_FORMAT",
    "PROTOCOLS",
    "Delay",
    "Endpoint",
    "EndpointClosed",
    "EndpointLimits",
    "EndpointStats",
    "Faults",
    "Link",
    "LinkStats",
    "SendFailed",
    "loopback_config",
]

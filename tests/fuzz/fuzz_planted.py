"""A planted engine defect for the fuzz tests, reachable from Spark executors.

Monkeypatching works only in the driver process, so the defect is an ``EngineFactory``: engines
whose transport silently drops every XMIT_REQ datagram they emit. The tests ship this file to the
executors (``SparkContext.addPyFile``) and name it to the fuzzer as ``fuzz_planted:engines``.
"""

from __future__ import annotations

from checks.conform.unicast3 import Unicast3Engines
from impl.unicast3.codec import XmitReqMsg, decode
from models.world import World


class DroppingXmitReq(Unicast3Engines):
    def datagrams(self, member: int) -> list[tuple[int, bytes]]:
        return [(dst, data) for dst, data in super().datagrams(member) if not isinstance(decode(data), XmitReqMsg)]


def engines(world: World) -> Unicast3Engines:
    return DroppingXmitReq(world.cfg, world.n, world.initial_views)

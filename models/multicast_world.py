"""The multicast world: a design note for composing ``spec/nakack2.py`` (and later NAKACK4) with
a network, membership and faults. Nothing here is wired yet: no adapter, registry entry, model
file or CLI path uses this module (issue 14 leaves that to the next session). This module owns
the design; the code that implements it goes here, in ``models/multicast_factory.py`` (the model
file's sections) and in ``models/protocols/nakack2.py`` (the adapter).

Principle
---------
A multicast protocol is one more protocol to the existing machinery, not a fork. The world is
``models/world.World`` with other environment actions: the same packed state (n node ids, a
network id, an environment id, a history id: ``PackedStates``), the same interning and
memoisation on ``(node id, stimulus)``, the same ``Packet(src, dst, kind, msg)`` and network rule
2 (a per-channel *set* of packets: a copy identical to one in flight adds nothing, which keeps
retransmission loops finite), the same ``max_in_flight`` cut per directed channel, the same
history of ``spec/reliable_fifo`` channels plus step-property bits, the same batched expander,
fingerprints, symmetry reduction, checker, traces and charts. What is unicast-shaped today and
must be generalised, each in a few lines:

- ``World.successors`` enumerates ``AppSend(src, dst)`` per ordered pair; a multicast world
  enumerates ``AppMcast(src)`` per member instead. Both become one hook of the world:
  ``application_actions(world, env)``.
- ``ProtocolAdapter.handle`` dispatches on a fixed set of stimulus tags (``send``, ``timer``,
  ``view``, ``remove``); it becomes a table from tag to spec handler, to which the NAKACK2 adapter
  adds ``("mcast", payload)``, ``("join", joiner, view)`` and ``("merge", digest)``.
- ``Env`` holds the unicast budgets; the multicast world's ``Env`` adds the fields below.
  ``World._environment_actions`` becomes the hook that yields a protocol family's environment
  actions (views, and here joins, leaves, crashes, below drops).
- Rule 5 (timestamp renumbering) does not apply: NAKACK2 has no timestamps. Rule 6 (windows
  removed only while quiet) does not apply either: NAKACK2 has no receiver-removal hook; windows
  go only with views and merge digests, which JGroups does not gate.

State layout
------------
``(node_0, ..., node_{n-1}, net, env, history)``, all interned ids:

- ``node_i``: ``spec.nakack2.Node`` (windows, counter, is_server, become_server_queue,
  retransmission records, LastSeqnoResender, and STABLE's votes, merged digest and suspension).
- ``net``: a sorted tuple of ``Packet``s. A multicast is one ``Send`` per member of the sender's
  view (its own loopback copy included), so one packet per destination; each copy is delivered,
  lost, duplicated and reordered on its own. JoinRsp, STABLE votes, STABILITY, XMIT_REQ and
  XMIT_RSP are packets like any other, so a late or stale STABILITY is in the model.
- ``env``: ``loss``, ``duplicate`` and ``below_drop`` budgets; per member its position in its view
  script; per joiner whether the coordinator has answered its join; a bitmask of members that
  have stopped (left or crashed).
- ``history``: per (sender, receiver) a ``reliable_fifo.Channel`` (n x n, the sender's own
  channel included: a member delivers its own multicasts) and the step-property bits.

Actions
-------
- ``AppMcast(src)``: the application's next multicast, payload = the sender's count + 1, while
  the model's ``[sends]`` budget for ``src`` lasts and ``src`` is a running member with its own
  window (a joiner before its JoinRsp cannot send, as in JGroups). History: ``fifo.send`` on every
  channel ``(src, r)``.
- ``DeliverPacket``, ``DuplicatePacket``, ``LosePacket``: as today. A loopback copy
  (``src == dst``) is never lost by the network: it does not touch it.
- ``DropBelow(packet)``: the copy is consumed without reaching NAKACK2 (the transport's
  thread-pool rejection of seed 004, DISCARD below NAKACK2 in LastMessageDroppedTest). It has
  its own budget (``[faults] below_drop``), so a model can allow it while forbidding network
  loss: TCP loses nothing, yet the seed's requirement ("cannot be dropped before it reaches
  NAKACK2") is necessary, which the retransmission-off model with one below drop shows. It may
  hit loopback copies too (the thread pool does not care); the spec's own delivery then waits
  for the member's next loopback copy, as in JGroups.
- ``FireTimer(member, Timer)``: ``XMIT`` (only with retransmission on), ``STABLE``,
  ``BECOME_SERVER`` (while pending), as ``spec.nakack2.enabled_timers`` says.
- ``InstallView(member, members)``: per-member scripts, installed at any moment, in order
  (asymmetric and delayed installs). ``spec.nakack2.on_view``.
- ``AnswerJoin(coordinator, joiner)``: the coordinator's GMS takes the digest and suspends STABLE
  (``spec.nakack2.on_join``), sending the JoinRsp packet. Enabled once per ``[[joins]]`` entry,
  only while the coordinator's installed view does not contain the joiner yet (GMS takes the
  digest before casting the view); the view carried is the joiner's first scripted view, which
  the JoinRsp installs: the world installs no view at a joiner before its JoinRsp (GMS does not
  either, and ``spec.nakack2`` would then create the joiner's windows at 0 and ignore the
  digest).
- ``Stop(member)``: a leave or a crash (``[[leaves]]``, ``[[crashes]]``): the member takes no
  further action (no timers, no sends; packets to it are consumed on arrival without effect);
  packets it already sent stay in flight. A graceful leave differs only in that the others'
  view scripts drop it; NAKACK2 sees nothing else of a LEAVE.
- ``MergeDigest(member, digest)`` where a model lists one (``spec.nakack2.on_merge_digest``).

Fault-free continuations (liveness, as ``checks/explore/liveness.py`` judges them): deliveries,
``XMIT``, ``STABLE`` and ``BECOME_SERVER`` firings. Not: loss, duplication, below drops, views,
joins, stops, merges, application sends.

Model file
----------
``protocol = "nakack2"``; ``[sends]`` per member (``"A" = 3``); ``[faults]`` ``loss``,
``duplicate``, ``below_drop``, ``max_in_flight``; ``[[views]]`` as today; ``[[joins]]``
(``joiner``, ``coordinator``); ``[[leaves]]`` / ``[[crashes]]`` (``member``); ``[config]``
``xmit_interval`` (0 or 1 suffice: only the sign matters), ``use_mcast_xmit``,
``resend_last_seqno_max_times``, ``become_server_queue_size`` (1 or 2 in models: the seed's
50 is a scale, the gap needs queue size + 1 messages from one sender during the join). A member
absent from ``[[views]]``'s first entries and present in ``[[joins]]`` starts as a joiner
(``spec.nakack2.initial_node`` with a view that excludes it).

Properties, and how they see the world
--------------------------------------
Safety, on every state (``WorldView.nodes`` and ``.history``):

- ``in_order``, ``no_duplicate``, ``delivered_was_sent``: ``reliable_fifo``'s, per (sender,
  receiver) channel, with window incarnations from ``WindowCreated``/``WindowRemoved``.
- ``window_order``, ``slots_hold_their_seqnos``, ``seqno_discipline``, ``queue_within_bound``:
  node properties from the spec.
- ``purge_covered`` (P6): pair property from the spec; and ``purge_safe`` as a step property:
  at each ``StablePurged(sender, upto)`` observed at the sender itself, every running member that
  has the sender in its view and a window for it has delivered ``upto`` (the observation reads
  the other nodes, so ``observe_reads`` names them all).
- ``window_bounded``: ``held_undelivered(node, sender) <= [check] window_bound`` for every pair,
  the growth JGRP-2675 makes unbounded (with a finite send budget the growth is finite, so the
  model sets the bound below what the scenario's sends make the window hold).

Liveness (AG EF over fault-free continuations):

- ``eventually_delivered``: every channel ``(s, r)`` with both running and in each other's
  current views, and ``r`` a server with a window for ``s``, has delivered every payload of ``s``
  above the window's creation offset. The history therefore excuses, at a ``WindowCreated(s, 0,
  offset)`` from a digest, payloads ``1 .. offset`` on ``(s, r)`` (``reliable_fifo.excuse``: the
  joiner is not owed what was delivered before it joined), and the payloads still undelivered
  on ``(s, r)`` when ``r``'s window for ``s`` is removed by a view without ``s``, or when ``s`` or
  ``r`` stops (a departed sender owes nothing; virtual synchrony proper, flushing before the
  view, is FLUSH's job and not NAKACK2's).
- ``window_drains``: every window empties (``held_undelivered == 0``) on some fault-free
  continuation; the liveness twin of ``window_bounded`` for JGRP-2675 ("it only grows").
- ``all_delivered_witness``: every send made and every channel delivered (against vacuous models).

The models the issue asks for, in these terms: JGRP-2675 (``xmit_interval = 0``, variant
``bounded_queue_no_xmit``, queue size 1, a join while the sender sends 3: expected
``violation:eventually_delivered``; twin without the variant: pass); below drop (``xmit_interval
= 0``, ``below_drop = 1``: violation; ``xmit_interval = 1``: pass); 3 members, retransmission on,
a join during traffic and a leave, with loss: pass. JGRP-2678 and JGRP-1539 are resource
defects (requests for messages still in flight, digest 3.12) that abstract time alone cannot
separate from their fixes: with timers firing at any moment, a fixed NAKACK2 also asks for a copy
that is still in flight. What the fixes guarantee is a grace period, and the world can state it
with two bits per original copy (the one the application's multicast put on the wire): a copy is
*young* for the retransmit task until its receiver has run that task once since the copy was
sent (JGRP-1539), and young for STABLE until its receiver has handled one STABILITY since
(JGRP-2678). The step property ``no_premature_xmit_req``: an XMIT_REQ made by the retransmit task
(or by a STABILITY) never names a seqno whose original copy to the requester is still in flight
and young for that task (or for STABLE). It fails on the variants ``xmit_all_gaps`` and
``stable_xmit_current_hr`` and holds on their twins: with the fix, a gap is asked for on the run
after the one that saw it (the missing original was sent before that run), and the STABLE
request names the previous round's hr (sent before the previous STABILITY). Requests answering a
HIGHEST_SEQNO are exempt: they are immediate by design (digest 3.11), and retransmitted copies
are not originals (asking again for a lost message is the protocol working). The bits cost state
only in those two models; the others leave them off.
"""

"""Test helper: a Hypothesis state machine whose rules are the world's actions and whose invariant
is "engine == spec" (``checks/differential.Lockstep`` does the comparing), for any protocol.

Each rule picks one enabled world action of its kind (Hypothesis shrinks the choice index), so a
failure prints as a short program of named environment actions. Every engine's own structural
invariants (``check_invariants``) are checked after every step too. A subclass names its model
(``MODEL``) and whether the spec's safety properties are invariants too (``CHECK_PROPERTIES``).

Variant dimension (issue 19, item 4): each example first draws the variant it runs under from
``checks.conform.variants.variant_runs`` (as shipped, every flag alone, every fix together; a
failure shrinks towards "as shipped"), and the spec's properties are invariants only under a
variant whose ``safety`` says so. ``VARIANTS = False`` runs the model as shipped only.
``engine_factory`` gives the harness's engine factory (a subclass may run the engines with tiny
window rows or shifted seqnos: issue 19, item 5).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from checks.conform.differential import Divergence, EngineFactory, Lockstep, Shared
from checks.conform.engines import engines_for
from checks.conform.variants import VariantRun, variant_runs, with_variant
from models.modelfile import Model
from models.multicast_world import AnswerJoin, AppMcast, DropBelow, MergeView, Stop
from models.world import AppSend, DeliverPacket, DuplicatePacket, FireTimer, InstallView, LosePacket, RemoveReceiver

CHOICE = st.integers(min_value=0, max_value=1_000)
SHARED: dict[tuple[str, tuple[str, ...], EngineFactory], Shared] = {}  # (model, variant, engines) -> caches


class WorldAgreement(RuleBasedStateMachine):
    MODEL: ClassVar[Model]
    CHECK_PROPERTIES: ClassVar[bool] = True
    VARIANTS: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self.variant = VariantRun((), True)
        self.run: Lockstep
        self.divergence: Divergence | None = None

    def engine_factory(self) -> EngineFactory:
        return engines_for

    @initialize(choice=CHOICE)
    def variant_chosen(self, choice: int) -> None:
        runs = variant_runs(self.MODEL) if self.VARIANTS else (VariantRun(self.MODEL.variant, True),)
        self.variant = runs[choice % len(runs)]
        model = with_variant(self.MODEL, self.variant.flags) if self.VARIANTS else self.MODEL
        engines = self.engine_factory()
        key = (model.reference, model.variant, engines)
        shared = SHARED.get(key) or SHARED.setdefault(key, Shared(model, engines))
        self.run = Lockstep(model, engines, check_properties=self.CHECK_PROPERTIES and self.variant.safety,
                            shared=shared)

    def _enabled(self, kind: type) -> list[tuple[Any, Any]]:
        """The enabled actions of ``kind`` in a canonical order (by their JSON), so that a choice
        picks the same action whatever the process did before (the world's enumeration order can
        follow its memo tables)."""
        world = self.run.world
        options = [(a, s) for a, s in self.run.enabled() if isinstance(a, kind)]
        return sorted(options, key=lambda pair: json.dumps(world.action_to_json(pair[0]), sort_keys=True))

    def _take(self, kind: type, choice: int) -> None:
        options = self._enabled(kind)
        action, after = options[choice % len(options)]
        self.divergence = self.run.step(action, after)

    @precondition(lambda self: bool(self._enabled(AppSend)))
    @rule(choice=CHOICE)
    def application_sends(self, choice: int) -> None:
        self._take(AppSend, choice)

    @precondition(lambda self: bool(self._enabled(DeliverPacket)))
    @rule(choice=CHOICE)
    def network_delivers(self, choice: int) -> None:
        self._take(DeliverPacket, choice)

    @precondition(lambda self: bool(self._enabled(LosePacket)))
    @rule(choice=CHOICE)
    def network_loses(self, choice: int) -> None:
        self._take(LosePacket, choice)

    @precondition(lambda self: bool(self._enabled(DuplicatePacket)))
    @rule(choice=CHOICE)
    def network_duplicates(self, choice: int) -> None:
        self._take(DuplicatePacket, choice)

    @precondition(lambda self: bool(self._enabled(FireTimer)))
    @rule(choice=CHOICE)
    def timer_fires(self, choice: int) -> None:
        self._take(FireTimer, choice)

    @precondition(lambda self: bool(self._enabled(InstallView)))
    @rule(choice=CHOICE)
    def view_installed(self, choice: int) -> None:
        self._take(InstallView, choice)

    @precondition(lambda self: bool(self._enabled(RemoveReceiver)))
    @rule(choice=CHOICE)
    def receiver_removed(self, choice: int) -> None:
        self._take(RemoveReceiver, choice)

    # the multicast world's own actions (models/multicast_world.py); never enabled in the point-to-point world
    @precondition(lambda self: bool(self._enabled(AppMcast)))
    @rule(choice=CHOICE)
    def application_multicasts(self, choice: int) -> None:
        self._take(AppMcast, choice)

    @precondition(lambda self: bool(self._enabled(DropBelow)))
    @rule(choice=CHOICE)
    def dropped_below_the_protocol(self, choice: int) -> None:
        self._take(DropBelow, choice)

    @precondition(lambda self: bool(self._enabled(AnswerJoin)))
    @rule(choice=CHOICE)
    def join_answered(self, choice: int) -> None:
        self._take(AnswerJoin, choice)

    @precondition(lambda self: bool(self._enabled(MergeView)))
    @rule(choice=CHOICE)
    def merge_view_installed(self, choice: int) -> None:
        self._take(MergeView, choice)

    @precondition(lambda self: bool(self._enabled(Stop)))
    @rule(choice=CHOICE)
    def member_stops(self, choice: int) -> None:
        self._take(Stop, choice)

    @precondition(lambda self: not self.run.enabled())
    @rule()
    def quiescent(self) -> None:
        """Nothing is enabled: every message is delivered and acknowledged, or a bound is hit."""

    @invariant()
    def engine_agrees_with_spec(self) -> None:
        assert self.divergence is None, str(self.divergence)

    @invariant()
    def engines_are_well_formed(self) -> None:
        for engine in self.run.engines.engines:
            engine.check_invariants()

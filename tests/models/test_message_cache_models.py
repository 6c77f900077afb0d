"""UNICAST3's message cache (JGRP-2327) in the shipped models.

Invariants tested: the JGRP-2327 pair tells the cache apart: each model's witness replays under its
own variant and not under the other's (with the cache, B's first ACK acknowledges the reordered #2;
without it, #1 alone and #2 needs the highest-sent resend); and every model that brings back a
defect of a 3.x release also drops what the cache keeps, as those releases did (JGroups has the
cache from 5.2 on), so its counterexample is the one of that release.
"""

from __future__ import annotations

from checks.check import witness_error
from checks.cli import MODELS_DIR
from models.modelfile import load, load_all

CACHED = MODELS_DIR / "unicast3" / "jgrp2327-message-cache.toml"
DROPPED = MODELS_DIR / "unicast3" / "jgrp2327-no-message-cache.toml"
RELEASES_3X = {"no_timestamps", "no_hs_resend", "remove_on_view_change", "ack_only_new", "no_sync_rate_limit",
               "remove_without_ack_flush", "close_to_non_members", "stale_xmit_record_asks_all"}  # before 5.2


def test_each_witness_replays_under_its_own_variant_only() -> None:
    cached, dropped = load(CACHED), load(DROPPED)
    assert cached.variant == () and dropped.variant == ("no_message_cache",)
    assert witness_error(cached) is None and witness_error(dropped) is None
    error = witness_error(load(CACHED, variant=("no_message_cache",)))
    assert error is not None and "step 6" in error and "ACK(seqno=2" in error, error
    error = witness_error(load(DROPPED, variant=()))
    assert error is not None and "step 6" in error and "ACK(seqno=1" in error, error


def test_every_model_of_a_3x_defect_drops_what_the_cache_keeps() -> None:
    checked = 0
    for path in sorted(MODELS_DIR.rglob("*.toml")):
        for model in load_all(path):
            if model.protocol == "unicast3" and RELEASES_3X & set(model.variant):
                assert "no_message_cache" in model.variant, path
                checked += 1
    assert checked >= 11


def test_no_message_cache_is_the_spec_before_the_cache() -> None:
    """Under JGRP-2327's variant the cache stays empty: basic-one-way has the 24,604 states it was
    pinned at before the cache (13,205 with it)."""
    from checks.check import check_model

    path = MODELS_DIR / "unicast3" / "basic-one-way.toml"
    before = check_model(load(path, variant=("no_message_cache",)), trace_dir=None).to_json()
    assert (before["verdict"], before["unreduced_states"]) == ("pass", 24_604)
    assert load(path).pinned_states == 13_205

"""Unit tests of spec/reliable_fifo.py: the abstract FIFO channel every protocol run is checked against.

Each test drives one channel by hand and checks the recorded state (sent, delivered and excused bits,
the current incarnation's run, the sticky violation bits) after every step.
"""

from __future__ import annotations

from spec import reliable_fifo as fifo
from spec.reliable_fifo import DUPLICATE, NOT_SENT, OUT_OF_ORDER, Channel


def sent(n: int) -> Channel:
    """A channel on which the sender's application has sent payloads 1..n, nothing delivered."""
    channel = Channel()
    for _ in range(n):
        channel = fifo.send(channel)
    return channel


def clean(channel: Channel) -> bool:
    """All three safety predicates hold."""
    return fifo.no_duplicate(channel) and fifo.in_order(channel) and fifo.delivered_was_sent(channel)


def test_initial_channel_is_empty_and_trivially_complete() -> None:
    channel = Channel()
    assert channel == Channel(sent=0, delivered=0, excused=0, run_first=0, run_last=0, violations=0)
    assert channel.all_delivered()
    assert clean(channel)


def test_send_numbers_payloads_consecutively() -> None:
    channel = fifo.send(Channel())
    assert channel == Channel(sent=1)
    assert not channel.all_delivered()
    channel = fifo.send(channel)
    assert channel == Channel(sent=2)


def test_in_order_delivery_is_clean_and_completes() -> None:
    channel = sent(3)
    channel = fifo.deliver(channel, 1)
    assert channel == Channel(sent=3, delivered=0b001, run_first=1, run_last=1)
    assert not channel.all_delivered()
    channel = fifo.deliver(channel, 2)
    assert channel == Channel(sent=3, delivered=0b011, run_first=1, run_last=2)
    channel = fifo.deliver(channel, 3)
    assert channel == Channel(sent=3, delivered=0b111, run_first=1, run_last=3)
    assert channel.all_delivered()
    assert clean(channel)


def test_duplicate_within_an_incarnation_is_flagged() -> None:
    channel = fifo.deliver(fifo.deliver(sent(2), 1), 2)
    channel = fifo.deliver(channel, 1)
    assert channel.violations == DUPLICATE
    assert not fifo.no_duplicate(channel)
    assert fifo.in_order(channel) and fifo.delivered_was_sent(channel)
    assert (channel.run_first, channel.run_last) == (1, 2)  # the run does not move back


def test_redelivering_the_last_payload_is_a_duplicate() -> None:
    channel = fifo.deliver(fifo.deliver(sent(1), 1), 1)
    assert channel.violations == DUPLICATE


def test_gap_is_out_of_order() -> None:
    channel = fifo.deliver(sent(3), 1)
    channel = fifo.deliver(channel, 3)  # skips 2
    assert channel.violations == OUT_OF_ORDER
    assert not fifo.in_order(channel)
    assert fifo.no_duplicate(channel) and fifo.delivered_was_sent(channel)
    assert (channel.run_first, channel.run_last) == (1, 3)


def test_delivery_below_the_run_is_out_of_order_not_duplicate() -> None:
    channel = fifo.deliver(sent(3), 2)  # an incarnation may start anywhere
    assert channel.violations == 0
    channel = fifo.deliver(channel, 1)  # below run_first: never delivered in this run
    assert channel.violations == OUT_OF_ORDER
    assert (channel.run_first, channel.run_last) == (2, 2)


def test_payload_never_sent_is_flagged() -> None:
    channel = fifo.deliver(sent(2), 3)
    assert channel.violations == NOT_SENT
    assert not fifo.delivered_was_sent(channel)
    assert channel.delivered == 0b100


def test_payload_zero_is_not_sent_and_sets_no_delivered_bit() -> None:
    channel = fifo.deliver(sent(2), 0)
    assert channel.violations == NOT_SENT
    assert channel.delivered == 0


def test_one_delivery_can_break_several_clauses() -> None:
    channel = fifo.deliver(sent(2), 1)
    channel = fifo.deliver(channel, 5)  # a gap and never sent
    assert channel.violations == OUT_OF_ORDER | NOT_SENT


def test_violations_are_sticky() -> None:
    channel = fifo.deliver(fifo.deliver(sent(3), 1), 1)
    assert channel.violations == DUPLICATE
    channel = fifo.deliver(channel, 2)  # a correct delivery does not clear the history bit
    assert channel.violations == DUPLICATE
    channel = fifo.new_incarnation(channel)  # nor does a new incarnation
    assert channel.violations == DUPLICATE


def test_new_incarnation_allows_repeats_and_any_start() -> None:
    """Receiver-side reset (P2 caveat): payloads of the old run may be delivered again, and the new
    run may start anywhere, even above a gap (sender-side reset, P1)."""
    channel = fifo.deliver(fifo.deliver(sent(5), 1), 2)
    channel = fifo.new_incarnation(channel)
    assert channel == Channel(sent=5, delivered=0b00011, run_first=0, run_last=0)
    channel = fifo.deliver(channel, 2)  # repeated in the new incarnation: allowed
    channel = fifo.deliver(channel, 3)
    assert channel.violations == 0
    assert (channel.run_first, channel.run_last) == (2, 3)
    channel = fifo.new_incarnation(channel)
    channel = fifo.deliver(channel, 5)  # starts above the missing 4
    assert channel.violations == 0
    assert not channel.all_delivered()  # 4 was never delivered


def test_new_incarnation_without_a_run_changes_nothing() -> None:
    channel = sent(2)
    assert fifo.new_incarnation(channel) is channel


def test_excuse_completes_without_counting_as_delivered() -> None:
    channel = fifo.deliver(sent(3), 1)
    channel = fifo.excuse(channel, (2, 3))
    assert channel == Channel(sent=3, delivered=0b001, excused=0b110, run_first=1, run_last=1)
    assert channel.all_delivered()
    assert clean(channel)


def test_excuse_of_nothing_is_a_no_op() -> None:
    channel = sent(1)
    assert fifo.excuse(channel, ()) == channel


def test_all_delivered_unions_incarnations_and_ignores_unsent_bits() -> None:
    channel = fifo.deliver(sent(3), 1)
    channel = fifo.new_incarnation(channel)
    channel = fifo.deliver(fifo.deliver(channel, 2), 3)
    assert channel.all_delivered()
    channel = fifo.send(channel)  # payload 4 sent, not yet delivered
    assert not channel.all_delivered()
    channel = fifo.excuse(channel, (4,))
    assert channel.all_delivered()


def test_dont_loopback_on_the_self_channel_is_never_delivered_and_may_be_passed_over() -> None:
    """Rule 4a: payload 2 is DONT_LOOPBACK on the channel to the sender itself."""
    channel = fifo.send(fifo.send(fifo.send(Channel()), dont_loopback=True))
    assert channel.dont_loopback == 0b10 and not channel.all_delivered()
    channel = fifo.deliver(fifo.deliver(channel, 1), 3)
    assert clean(channel) and fifo.no_self_delivery(channel) and channel.all_delivered()
    delivered = fifo.deliver(channel, 2)
    assert not fifo.no_self_delivery(delivered) and fifo.delivered_was_sent(delivered)


def test_without_dont_loopback_sends_the_self_channel_is_the_fifo_one() -> None:
    channel = fifo.deliver(fifo.deliver(sent(3), 1), 3)
    assert not fifo.in_order(channel) and fifo.no_self_delivery(channel)

"""Signals held during a run reach their handlers only between two events (run/held_signals)."""

import signal

import pytest

from wheelsim.run.held_signals import HeldSignals


def test_a_signal_waits_for_deliver_then_reaches_its_handler():
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, (
        f'an earlier test left SIGINT handled by {signal.getsignal(signal.SIGINT)!r}'
    )
    with pytest.raises(KeyboardInterrupt), HeldSignals() as held:
        # raise_signal: sent to this (the main) thread and handled before it returns. A signal
        # sent to the process (os.kill) may land on another of the suite's many threads and
        # reach Python later (a CI run: "DID NOT RAISE").
        signal.raise_signal(signal.SIGINT)
        reached_deliver = True
        held.deliver()
    assert reached_deliver
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_signal_held_to_the_end_is_delivered_when_the_block_ends():
    seen = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        with HeldSignals():
            signal.raise_signal(signal.SIGTERM)
            assert seen == []
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_default_handler_is_left_alone():
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with HeldSignals():
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
            assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler  # held
    finally:
        signal.signal(signal.SIGTERM, previous)

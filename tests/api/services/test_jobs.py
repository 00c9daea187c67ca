"""The fair upload queue: users take turns, a user runs one job at a time, and with two slots
a small upload runs while another user's big one is still going."""

from __future__ import annotations

import threading

from ragchat.api.services.jobs import FairJobQueue


def test_users_take_turns_one_job_each() -> None:
    queue = FairJobQueue(slots=1)
    order: list[str] = []
    started, gate = threading.Event(), threading.Event()

    def first_job() -> None:
        started.set()
        gate.wait(10)
        order.append("a1")

    first = queue.submit("a", first_job)
    assert started.wait(10)
    for user, job in [("a", "a2"), ("a", "a3"), ("b", "b1"), ("c", "c1"), ("b", "b2")]:
        queue.submit(user, order.append, job)
    assert queue.pending() == 5
    gate.set()
    first.result(10)
    queue.shutdown(wait=True)
    assert order == ["a1", "b1", "c1", "a2", "b2", "a3"]


def test_a_small_upload_does_not_wait_for_another_users_big_one() -> None:
    queue = FairJobQueue(slots=2)
    big_started, release = threading.Event(), threading.Event()

    def big() -> str:
        big_started.set()
        release.wait(10)
        return "big"

    big_done = queue.submit("alice", big)
    assert big_started.wait(10)
    # Alice's second job waits for her first; Bob's runs now, on the other slot.
    alice_next = queue.submit("alice", lambda: "alice 2")
    assert queue.submit("bob", lambda: "small").result(10) == "small"
    assert not big_done.done() and not alice_next.done()
    release.set()
    assert (big_done.result(10), alice_next.result(10)) == ("big", "alice 2")
    queue.shutdown(wait=True)


def test_shutdown_cancels_queued_jobs_and_lets_the_running_one_finish() -> None:
    queue = FairJobQueue(slots=1)
    started, release = threading.Event(), threading.Event()

    def long_job() -> bool:
        started.set()
        return release.wait(10)

    running = queue.submit("a", long_job)
    assert started.wait(10)
    queued = queue.submit("b", lambda: "never")
    stopper = threading.Thread(target=queue.shutdown, kwargs={"cancel_futures": True})
    stopper.start()
    release.set()
    stopper.join(10)
    assert running.result(1) is True and queued.cancelled()


def test_an_error_in_a_job_reaches_its_future_and_the_queue_goes_on() -> None:
    queue = FairJobQueue(slots=1)

    def boom() -> None:
        raise ValueError("bad file")

    failed = queue.submit("a", boom)
    after = queue.submit("a", lambda: "next")
    assert isinstance(failed.exception(10), ValueError) and after.result(10) == "next"
    queue.shutdown()


def test_fresh_identities_from_one_address_never_hold_every_slot() -> None:
    """Two identities from one address (two crafted uploads) hold one of the two slots: a
    third user's upload from another address starts at once; the address's second job waits
    for its first."""
    queue = FairJobQueue(slots=2)
    started = {"m1": threading.Event(), "m2": threading.Event()}
    release = threading.Event()

    def crafted(name: str) -> str:
        started[name].set()
        release.wait(10)
        return name

    first = queue.submit("mallory-1", crafted, "m1", address="203.0.113.5")
    assert started["m1"].wait(10)
    second = queue.submit("mallory-2", crafted, "m2", address="203.0.113.5")
    small = queue.submit("carol", lambda: "small", address="198.51.100.2")
    assert small.result(10) == "small"
    assert not started["m2"].is_set() and not second.done()
    release.set()
    assert (first.result(10), second.result(10)) == ("m1", "m2")
    queue.shutdown(wait=True)


def test_addresses_take_turns_and_a_larger_share_can_be_configured() -> None:
    queue = FairJobQueue(slots=1)
    order: list[str] = []
    gate = threading.Event()
    running = queue.submit("a1", gate.wait, 10, address="A")
    for user, address in [("a2", "A"), ("a3", "A"), ("b1", "B"), ("c1", "C")]:
        queue.submit(user, order.append, user, address=address)
    gate.set()
    running.result(10)
    queue.shutdown(wait=True)
    assert order == ["b1", "c1", "a2", "a3"]  # the busy address goes last
    assert FairJobQueue(slots=4).per_address == 2
    assert FairJobQueue(slots=4, per_address=4).per_address == 4
    assert FairJobQueue(slots=1).per_address == 1

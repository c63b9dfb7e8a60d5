from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domi_desktop.errors import ParamError
from domi_desktop.scheduler.burst import BurstQueue

T0 = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)


def test_two_hundred_catch_ups_all_run_once_never_more_than_k_at_once() -> None:
    # 200 schedules due during a 12 h sleep, submitted in arbitrary order at the wake.
    dues = {key: T0 + timedelta(minutes=key * 3.6) for key in range(200)}
    order = list(dues)
    random.Random(13).shuffle(order)
    queue: BurstQueue[int] = BurstQueue(3)
    running: set[int] = set()
    started: list[int] = []
    peak = 0

    def start(keys: tuple[int, ...]) -> None:
        nonlocal peak
        running.update(keys)
        started.extend(keys)
        peak = max(peak, len(running))

    for key in order:
        start(queue.submit(key, dues[key]))
    rng = random.Random(7)
    while running:
        finished = rng.choice(sorted(running))
        running.discard(finished)
        start(queue.done(finished))

    assert sorted(started) == list(range(200))
    assert peak == 3
    # After the first three (whoever came first), the rest start in due order.
    assert started[3:] == sorted(started[3:], key=dues.__getitem__)


def test_a_key_is_never_taken_twice() -> None:
    queue: BurstQueue[str] = BurstQueue(1)
    assert queue.submit("a", T0) == ("a",)
    assert queue.submit("a", T0) == ()
    assert queue.submit("b", T0) == ()
    assert queue.submit("b", T0) == ()
    assert queue.queued == ("b",)
    assert queue.done("a") == ("b",)
    assert queue.done("b") == ()
    assert queue.running == frozenset()


def test_a_dropped_queued_key_never_starts() -> None:
    queue: BurstQueue[str] = BurstQueue(1)
    queue.submit("a", T0)
    queue.submit("b", T0 + timedelta(minutes=1))
    queue.submit("c", T0 + timedelta(minutes=2))
    assert queue.done("b") == ()
    assert queue.done("a") == ("c",)


def test_a_larger_limit_starts_more_at_once() -> None:
    queue: BurstQueue[int] = BurstQueue(1)
    for key in range(4):
        queue.submit(key, T0 + timedelta(minutes=key))
    assert queue.resize(3) == (1, 2)
    assert queue.running == frozenset({0, 1, 2})
    assert queue.limit == 3


def test_the_limit_is_at_least_one() -> None:
    with pytest.raises(ParamError, match="catch_up_burst: must be at least 1, not 0"):
        BurstQueue(0)


@given(
    st.integers(1, 5),
    st.lists(
        st.tuples(st.integers(0, 30), st.integers(0, 1000)), max_size=50, unique_by=lambda t: t[0]
    ),
)
def test_admission_is_bounded_and_starts_each_key_once(
    limit: int, plan: list[tuple[int, int]]
) -> None:
    queue: BurstQueue[int] = BurstQueue(limit)
    started: list[int] = []
    for key, minute in plan:
        started.extend(queue.submit(key, T0 + timedelta(minutes=minute)))
        assert len(queue.running) <= limit
        if len(started) % 3 == 0 and queue.running:
            started.extend(queue.done(min(queue.running)))
    while queue.running:
        started.extend(queue.done(min(queue.running)))
    # Equal to a sorted set: every submitted key started, none twice.
    assert sorted(started) == sorted({key for key, _ in plan})

"""Memory a burst of threads freed goes back to the OS (glibc), measured in a fresh process; the
heap set aside from the garbage collector at rest."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from collections.abc import Iterator

import pytest

from domi_desktop.platform import memory

SCRIPT = """
import ctypes
import threading
from domi_desktop.platform.memory import give_back, limit_arenas

def rss():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS"))

print(limit_arenas())
# No trimming of glibc's own while the burst frees (M_TRIM_THRESHOLD, M_MMAP_THRESHOLD fixed):
# what it would give back by chance varies from run to run; what stays is then all the burst's.
libc = ctypes.CDLL(None)
libc.mallopt(-1, 1 << 30)
libc.mallopt(-3, 1 << 20)
before = rss()
together = threading.Barrier(8)
def burst():
    # Many small blocks (below the mmap threshold), all held at once, then freed: what a
    # catch-up's job threads leave in the arenas.
    held = [bytes(2000) for _ in range(20000)]
    together.wait()
    del held
threads = [threading.Thread(target=burst) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
kept = rss() - before
print(give_back())
print(kept, rss() - before)
"""


@pytest.mark.linux_only
@pytest.mark.skipif(memory._LIBC is None, reason="glibc's allocator only")
def test_after_a_burst_of_threads_the_freed_memory_goes_back() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True
    )
    limited, gave, sizes = done.stdout.splitlines()
    kept, after = map(int, sizes.split())
    assert (limited, gave) == ("True", "True")
    assert kept >= 150, f"the burst held only {kept} MB"
    assert after <= kept // 2, f"{kept} MB held after the burst, {after} MB after give_back"


def test_elsewhere_it_does_nothing_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_LIBC", None)
    assert memory.limit_arenas() is False
    assert memory.give_back() is False


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """The test's own process goes back to a heap nothing is set aside from."""
    walked, rests, thresholds = memory._walked, memory._rests, gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        memory._walked, memory._rests = walked, rests


class Node:
    other: Node | None = None


def cycle() -> weakref.ref[Node]:
    first, second = Node(), Node()
    first.other, second.other = second, first
    return weakref.ref(first)


@pytest.mark.usefixtures("unfrozen")
def test_settling_sets_what_lives_aside_and_a_cycle_that_died_since_is_still_collected() -> None:
    alive = cycle()
    kept = alive()  # alive while the heap is settled: set aside with the rest
    memory._walked = 0
    memory.settle_heap()
    assert gc.get_freeze_count() > 0
    del kept
    gc.collect()
    assert alive() is not None  # frozen: the collector does not look at it
    memory.settle_heap()
    assert alive() is not None  # what is set aside has not grown: not looked at again yet
    grown = [[] for _ in range(gc.get_freeze_count())]
    memory.settle_heap()
    assert alive() is None  # grown by half: looked at again, found dead, collected
    del grown


@pytest.mark.usefixtures("unfrozen")
def test_a_cycle_that_died_once_set_aside_is_collected_within_a_bounded_number_of_rests() -> None:
    memory._walked = 0
    memory.settle_heap()
    alive = cycle()
    kept = alive()
    memory.settle_heap()  # set aside while alive
    del kept
    for _ in range(memory.REWALK_EVERY - 2):
        memory.settle_heap()
        assert alive() is not None  # nothing grew: not looked at again yet
    memory.settle_heap()
    assert alive() is None


class FullCollections:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            self.count += 1


@pytest.mark.usefixtures("unfrozen")
def test_after_settling_a_full_collection_does_not_wait_for_a_quarter_of_the_heap() -> None:
    # The collector runs a full collection only once what reached the oldest generation since the
    # last one is a quarter of what that one counted; a heap of 40,000 set aside must not make
    # 5,000 new survivors wait (thresholds made small so that the count, not the quarter, decides).
    heap = [[] for _ in range(40_000)]
    memory._walked = 0
    memory.settle_heap()
    gc.set_threshold(100, 2, 2)
    full = FullCollections()
    gc.callbacks.append(full)
    try:
        survivors = [[] for _ in range(5_000)]
    finally:
        gc.callbacks.remove(full)
    assert full.count > 0, "no full collection while 5,000 survivors came"
    del heap, survivors


@pytest.mark.usefixtures("unfrozen")
def test_after_start_up_each_full_collection_sets_its_survivors_aside() -> None:
    memory.set_aside_survivors()
    try:
        gc.unfreeze()
        survivors = [[] for _ in range(1000)]
        gc.collect()
        assert gc.get_freeze_count() >= len(survivors)
        gc.unfreeze()
        gc.collect(1)  # a younger generation's collection sets nothing aside
        assert gc.get_freeze_count() == 0
    finally:
        gc.callbacks.remove(memory._set_aside)

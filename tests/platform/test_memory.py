"""Memory a burst of threads freed goes back to the OS (glibc), measured in a fresh process; the
heap set aside from the garbage collector at rest."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref

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


def test_settling_sets_what_lives_aside_and_a_cycle_that_died_since_is_still_collected() -> None:
    class Node:
        other: Node | None = None

    def cycle() -> weakref.ref[Node]:
        first, second = Node(), Node()
        first.other, second.other = second, first
        return weakref.ref(first)

    alive = cycle()
    kept = alive()  # alive while the heap is settled: set aside with the rest
    try:
        memory.settle_heap()
        assert gc.get_freeze_count() > 0
        del kept
        gc.collect()
        assert alive() is not None  # frozen: the collector does not look at it
        memory.settle_heap()
        assert alive() is None  # looked at again, found dead, collected
    finally:
        gc.unfreeze()

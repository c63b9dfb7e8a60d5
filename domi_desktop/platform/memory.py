"""Giving memory back after a burst of jobs (glibc; elsewhere the allocator does its own).

Every thread that allocates gets a malloc arena of its own, up to eight per core, and what a
catch-up's hundreds of job threads freed stays in them: the tray measured 141 MB idle and 201 MB
after a catch-up at 10,000 schedules. Two arenas are plenty for a process whose threads mostly
wait, and ``malloc_trim`` hands the free pages back once the burst is over.
"""

from __future__ import annotations

import ctypes
import gc
import sys

from domi_desktop.ffi import Library, Signature, load_c

_M_ARENA_MAX = -8
ARENAS = 2


GLIBC: dict[str, Signature] = {
    "gnu_get_libc_version": ((), ctypes.c_char_p),
    "mallopt": ((ctypes.c_int, ctypes.c_int), ctypes.c_int),
    "malloc_trim": ((ctypes.c_size_t,), ctypes.c_int),
}


def _glibc() -> Library | None:
    if sys.platform != "linux":
        return None
    try:
        # musl has no gnu_get_libc_version: its malloc is left be.
        return load_c(None, GLIBC)
    except (OSError, AttributeError):
        return None


_LIBC = _glibc()


def limit_arenas() -> bool:
    """At start-up, before the threads: at most ``ARENAS`` malloc arenas. False if not glibc."""
    if _LIBC is None:
        return False
    return bool(_LIBC.mallopt(_M_ARENA_MAX, ARENAS))


def give_back() -> bool:
    """Return the allocator's free pages to the OS (after a burst). False if not glibc."""
    if _LIBC is None:
        return False
    return bool(_LIBC.malloc_trim(0))


def settle_heap() -> None:
    """When the app is at rest (started, or a burst over): what lives now is set aside from
    Python's cyclic garbage collector, which otherwise walks all of it, every schedule and every
    Qt wrapper, at each full collection. During a 10,000-schedule wake such a collection took
    100 ms, in whichever thread, holding the GIL: the GUI loop stood still through it.

    What was set aside is looked at again (``unfreeze``), so that a cycle that died since is
    collected, once it has grown by half since it was last looked at, or at the latest every
    ``REWALK_EVERY`` rests: that walk of the whole heap is itself 30-70 ms at 10,000 schedules,
    and a busy app comes to rest every minute."""
    global _walked, _rests
    _rests += 1
    gc.collect()  # what came since the last freeze
    gc.freeze()
    if not _walked or gc.get_freeze_count() > REWALK_GROWTH * _walked or _rests >= REWALK_EVERY:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        _walked, _rests = gc.get_freeze_count(), 0
    _count_nothing_as_old()


REWALK_GROWTH = 1.5
REWALK_EVERY = 60
_walked = 0
"""How many objects were set aside after the last walk of the whole heap (0: none yet)."""
_rests = 0
"""Rests since that walk."""


def _count_nothing_as_old() -> None:
    # A full collection waits until what was added to the oldest generation since the last one
    # is a quarter of the survivors that one counted, set aside or not. After a walk of the whole
    # heap the next full collection came only after a quarter of the heap was new, and walked
    # all of it (a 1,000,000-object heap: 160 ms). A collection of nothing counts 0 survivors.
    gc.collect()


def set_aside_survivors() -> None:
    """At start-up: from then on, what outlives each full collection is set aside as well. In a
    burst (a 10,000-schedule wake) every full collection otherwise walked all that the burst had
    made so far, again each time: 60-80 ms in the GUI thread, the wake's longest loop gaps
    (``bench/wake_bench.py`` with ``GAPS``). Set aside, each walks only what came since the last.
    A cycle that dies once set aside waits to be freed for ``settle_heap``'s next walk of the
    whole heap."""
    if _set_aside not in gc.callbacks:
        gc.callbacks.append(_set_aside)
    gc.freeze()
    _count_nothing_as_old()


def _set_aside(phase: str, info: dict[str, int]) -> None:
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()

"""Windows: suspend and resume through a power-notification callback, with or without a GUI.

``PowerRegisterSuspendResumeNotification`` (powrprof.dll, Windows 8 and later) with
``DEVICE_NOTIFY_CALLBACK`` has Windows call a function of ours: no window is involved, so the tray
and ``--headless`` (a bare ``QCoreApplication``, where creating a hidden ``QWindow`` aborted the
process with "Cannot create window: no screens available") use the same source. The registration is
also what brings the events on Modern Standby (S0 low-power idle) machines.

The callback runs on a thread of the system's pool, so it only hands the event to a ``QObject`` of
the thread that started the source, through a queued signal. Importable on every OS; tests inject a
fake ``powrprof`` that calls the real ctypes callback from a thread of its own.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from typing import Protocol, cast

from PySide6.QtCore import QObject, Qt, Signal, Slot

from domi_desktop.platform.resume.base import PowerCallbacks
from domi_desktop.ports import PowerEvent

PBT_APMSUSPEND = 0x4
PBT_APMRESUMESUSPEND = 0x7
PBT_APMRESUMEAUTOMATIC = 0x12
DEVICE_NOTIFY_CALLBACK = 0x2
ERROR_SUCCESS = 0

# Windows calls back with the stdcall convention (the same as the C one on x64 and arm64).
if sys.platform == "win32":
    _FUNCTYPE = ctypes.WINFUNCTYPE
else:
    _FUNCTYPE = ctypes.CFUNCTYPE

# ULONG CALLBACK DeviceNotifyCallbackRoutine(PVOID Context, ULONG Type, PVOID Setting);
# ULONG is 32 bits on Windows, so fixed-width types keep the layout Windows' on any OS.
DEVICE_NOTIFY_CALLBACK_ROUTINE = _FUNCTYPE(
    ctypes.c_uint32, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p
)


class SubscribeParameters(ctypes.Structure):
    """powrprof.h's ``DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS``."""

    _fields_ = (("Callback", DEVICE_NOTIFY_CALLBACK_ROUTINE), ("Context", ctypes.c_void_p))


class PowrProf(Protocol):
    """The two functions of powrprof.dll in use, with their argument types declared."""

    def PowerRegisterSuspendResumeNotification(
        self,
        flags: int,
        recipient: ctypes._Pointer[SubscribeParameters],
        registration: ctypes._Pointer[ctypes.c_void_p],
        /,
    ) -> int: ...

    def PowerUnregisterSuspendResumeNotification(self, registration: int, /) -> int: ...


def decode_power_event(power_type: int) -> PowerEvent | None:
    """What a ``PBT_*`` notification says about sleep, if anything.

    After a wake Windows always sends ``PBT_APMRESUMEAUTOMATIC``, then ``PBT_APMRESUMESUSPEND`` too
    when a user woke it: both count, a second report only re-plans again.
    """
    if power_type in (PBT_APMRESUMEAUTOMATIC, PBT_APMRESUMESUSPEND):
        return "resume"
    if power_type == PBT_APMSUSPEND:
        return "sleep"
    return None


class _Relay(QObject):
    """Carries an event from the system's thread to the thread this object lives in."""

    arrived = Signal(object)

    def __init__(self, deliver: Callable[[PowerEvent], None]) -> None:
        super().__init__()
        self._deliver = deliver
        self.arrived.connect(self._on_arrived, Qt.ConnectionType.QueuedConnection)

    @Slot(object)
    def _on_arrived(self, event: PowerEvent) -> None:
        self._deliver(event)


class SuspendResumeCallbackSource:
    """Reports sleep and resume from Windows' suspend/resume callback, on the starting Qt thread.

    ``platform`` and ``powrprof`` exist so tests can run it off Windows.
    """

    def __init__(self, *, platform: str = sys.platform, powrprof: PowrProf | None = None) -> None:
        self.status = "not started"
        self._platform = platform
        self._powrprof = powrprof
        self._relay: _Relay | None = None
        # One thunk and one parameter block for the object's whole life: Windows may still be
        # calling the function while an unregistration is under way.
        self._thunk = DEVICE_NOTIFY_CALLBACK_ROUTINE(self._on_power_event)
        self._parameters = SubscribeParameters(self._thunk, None)
        self._registration = ctypes.c_void_p()

    def start(
        self, on_resume: Callable[[], None], on_sleep: Callable[[], None] | None = None
    ) -> bool:
        self.stop()
        if self._platform != "win32":
            self.status = (
                f"suspend/resume notifications exist only on Windows, not on {self._platform}"
            )
            return False
        try:
            powrprof = self._powrprof or _load_powrprof()
        except OSError as error:
            self.status = f"powrprof.dll cannot be loaded, so no suspend/resume events: {error}"
            return False
        # Before registering: Windows may call back at once.
        self._relay = _Relay(PowerCallbacks("Windows power", on_resume, on_sleep).deliver)
        code = powrprof.PowerRegisterSuspendResumeNotification(
            DEVICE_NOTIFY_CALLBACK,
            ctypes.pointer(self._parameters),
            ctypes.pointer(self._registration),
        )
        if code != ERROR_SUCCESS:
            self._relay = None
            self.status = f"PowerRegisterSuspendResumeNotification failed with error {code}"
            return False
        self._powrprof = powrprof
        self.status = "listening to Windows suspend/resume notifications (callback, no window)"
        return True

    def stop(self) -> None:
        handle = self._registration.value
        if handle and self._powrprof is not None:
            self._powrprof.PowerUnregisterSuspendResumeNotification(handle)
        self._registration.value = None
        self._relay = None

    def _on_power_event(self, _context: int | None, power_type: int, _setting: int | None) -> int:
        """Called by Windows on a thread of its pool: hand over and return at once."""
        event = decode_power_event(power_type)
        relay = self._relay
        if event is not None and relay is not None:
            relay.arrived.emit(event)
        return ERROR_SUCCESS


def _load_powrprof() -> PowrProf:
    if sys.platform == "win32":
        dll = ctypes.WinDLL("powrprof")
        register = dll.PowerRegisterSuspendResumeNotification
        register.argtypes = (
            ctypes.c_uint32,
            ctypes.POINTER(SubscribeParameters),
            ctypes.POINTER(ctypes.c_void_p),
        )
        register.restype = ctypes.c_uint32
        unregister = dll.PowerUnregisterSuspendResumeNotification
        unregister.argtypes = (ctypes.c_void_p,)
        unregister.restype = ctypes.c_uint32
        # A WinDLL finds its functions by __getattr__, which a Protocol cannot see.
        return cast(PowrProf, dll)
    raise OSError("powrprof.dll exists only on Windows")

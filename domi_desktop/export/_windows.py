from typing import Any


def export_windows_task(*a: Any, **k: Any) -> Any:
    raise NotImplementedError

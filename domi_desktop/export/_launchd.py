from typing import Any


def export_launchd(*a: Any, **k: Any) -> Any:
    raise NotImplementedError

"""Test doubles for the platform layer."""

from __future__ import annotations


class MemoryRegistry:
    """``RegistryLike`` over a dict: what ``winreg`` would hold under the Run key."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    def set(self, name: str, value: str) -> None:
        self.values[name] = value

    def delete(self, name: str) -> None:
        self.values.pop(name, None)

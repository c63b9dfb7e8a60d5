"""A cell's roles in one call from Qt into Python.

A view asks each cell it paints for seven or so roles (text, colour, alignment, font...), and
each ``data()`` of a Python model is a call into the interpreter that must take the GIL: while a
catch-up's job threads hold it in turn, a repaint of a full table waited for it a thousand times
(the History froze the loop for a fifth of a second). Qt 6's delegates ask ``multiData`` first,
once per cell; answering there from ``data`` takes the GIL once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QModelRoleData, QModelRoleDataSpan, QPersistentModelIndex

AnyIndex = QModelIndex | QPersistentModelIndex


def fill_roles(
    data: Callable[[AnyIndex, int], Any],
    index: AnyIndex,
    roles: QModelRoleDataSpan | QModelRoleData,
) -> None:
    """``multiData`` from a model's ``data``: every asked role answered, the others cleared."""
    if isinstance(roles, QModelRoleData):
        every = [roles]
    else:  # PySide6 6.11's stubs lack the span's __getitem__
        every = [roles[position] for position in range(roles.size())]  # type: ignore[index]
    for role_data in every:
        value = data(index, role_data.role())
        if value is None:
            role_data.clearData()
        else:
            role_data.setData(value)

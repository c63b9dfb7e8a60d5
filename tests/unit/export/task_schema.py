"""The Task Scheduler schema, assembled at test time from Microsoft's published per-type pages
(MicrosoftDocs/win32, desktop-src/TaskSchd/taskschedulerschema-*.md, each with the type's
``syntax`` block). Nothing of it is stored here: the test finds a checkout (a bare git directory
in ``DOMI_WIN32_DOCS``, or the mirror this machine keeps) or is skipped, saying so."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

MIRROR = Path("/work/.mirror/MicrosoftDocs+win32/repo")
_FOLDER = "desktop-src/TaskSchd/"
_SYNTAX = re.compile(r"``` syntax\n(.*?)```", re.DOTALL)
_BUILTIN = (
    "string|boolean|duration|dateTime|unsignedByte|unsignedShort|unsignedInt|int|byte|"
    "base64Binary|hexBinary|anyURI|positiveInteger|nonNegativeInteger|token|ID|IDREF|NCName|QName"
)


def docs_git_dir() -> Path | None:
    given = os.environ.get("DOMI_WIN32_DOCS")
    path = Path(given) if given else MIRROR
    return path if (path / "HEAD").exists() or (path / ".git").exists() else None


def assemble(git_dir: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=True
        ).stdout

    names = [
        n
        for n in git("ls-tree", "-r", "--name-only", "HEAD", _FOLDER).split()
        if re.search(r"/(taskschedulerschema|schema)-[^/]*-(complextype|simpletype|group)\.md$", n)
        or n.endswith("taskschedulerschema-task-element.md")
    ]
    parts = []
    for name in names:
        for block in _SYNTAX.findall(git("show", f"HEAD:{name}")):
            parts.append(block)
    body = "\n".join(parts)
    # The pages leave built-in types unprefixed; in the schema they are XML Schema's.
    body = re.sub(rf'(type|base)="({_BUILTIN})"', r'\1="xs:\2"', body)
    # The Task element's page shows the keyref without the key it refers to (the principal id).
    body = body.replace(
        '<xs:keyref name="ContextKeyRef">',
        '<xs:keyref name="ContextKeyRef" refer="td:PrincipalKey">',
    )
    # Two pages render facets as enumeration values: nonEmptyString's minimum length (1) and
    # priorityType's bounds (0..10).
    body = re.sub(
        r'(<xs:simpleType name="nonEmptyString">.*?)<xs:enumeration\s+value="1"\s*/>',
        r'\1<xs:minLength value="1"/>',
        body,
        flags=re.DOTALL,
    )
    body = re.sub(
        r'(<xs:simpleType name="priorityType">.*?)<xs:enumeration\s+value="0"\s*/>'
        r'\s*<xs:enumeration\s+value="10"\s*/>',
        r'\1<xs:minInclusive value="0"/><xs:maxInclusive value="10"/>',
        body,
        flags=re.DOTALL,
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"'
        ' xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task"'
        ' xmlns:td="http://schemas.microsoft.com/windows/2004/02/mit/task"'
        ' targetNamespace="http://schemas.microsoft.com/windows/2004/02/mit/task"'
        ' elementFormDefault="qualified">\n'
        f"{body}\n</xs:schema>\n"
    )

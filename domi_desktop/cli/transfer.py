"""``export`` and ``import``: schedules as JSON between machines, or as a server scheduler's files."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from domi_desktop.cli.backend import Backend, backend
from domi_desktop.cli.render import printable
from domi_desktop.errors import AppError, DomiError, UsageError
from domi_desktop.frontdoor.rpc.protocol import MAX_LINE

TARGETS = ("json", "systemd", "launchd", "crontab", "k8s", "windows-task")
MAX_DOCUMENT = 64 * 1024 * 1024
"""Bytes of an import file; an export of 10,000 schedules is a few MB."""
PIECE_MARGIN = 64 * 1024
"""Bytes of a request line left for what wraps the schedules of a piece."""


def export(args: argparse.Namespace) -> int:
    if args.to == "json":
        params = {"ids": args.ids} if args.ids else {}
        with backend(args) as api:
            document = api.call("schedule.export", params)
        _write(args.output, json.dumps(document, ensure_ascii=False, indent=2) + "\n")
        return 0
    return _export_to_scheduler(args)


def _export_to_scheduler(args: argparse.Namespace) -> int:
    from domi_desktop.export import ExportTarget, export_schedule
    from domi_desktop.frontdoor.portable import schedule_from_json

    if len(args.ids) != 1:
        raise UsageError(f"--to {args.to} exports one schedule: give exactly one ID")
    with backend(args) as api:
        schedule = schedule_from_json(api.call("schedule.get", {"id": args.ids[0]}))
    result = export_schedule(
        schedule,
        ExportTarget(args.to),
        lossy=args.lossy,
        system=args.system,
        local_zone=args.local_zone,
    )
    for dropped in result.dropped:
        print(f"domi-desktop: dropped: {dropped}", file=sys.stderr)
    if args.output is None:
        for index, file in enumerate(result.files):
            print(("\n" if index else "") + f"# {file.name}\n{file.text}", end="")
        return 0
    folder = Path(args.output)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        shown = printable(args.output)
        raise UsageError(f"cannot make the folder {shown}: {error.strerror or error}") from None
    for file in result.files:
        _write(str(folder / file.name), file.text)
        print(printable(folder / file.name))
    return 0


def import_(args: argparse.Namespace) -> int:
    text = _read(args.file)
    name = printable(args.file)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{name}:{error.lineno}:{error.colno}: not JSON ({error.msg})") from None
    except RecursionError:
        raise UsageError(f"{name}: nested too deeply to be an export") from None
    except ValueError:  # the only other refusal of json.loads
        raise UsageError(
            f"{name}: holds a number of more than {sys.get_int_max_str_digits()} digits;"
            " not an export"
        ) from None
    params = {"document": document, "dry_run": args.dry_run, "disabled": args.disabled}
    with backend(args) as api:
        if len(json.dumps(params)) <= MAX_LINE - PIECE_MARGIN:
            result = api.call("schedule.import", params)
        else:
            result = _import_in_pieces(api, document, args)
    if args.json:
        print(json.dumps(result))
    elif args.dry_run:
        print(f"{result['checked']} schedule(s) would be imported")
    else:
        ids = ", ".join(str(i) for i in result["created"]) or "none"
        print(f"imported {len(result['created'])} schedule(s): {ids}")
    return 0


def _import_in_pieces(api: Backend, document: Any, args: argparse.Namespace) -> dict[str, Any]:
    """An import too large for one request to the app (its socket takes lines up to
    ``MAX_LINE``): checked whole here first, as the service checks it (so a bad entry still
    imports nothing), then sent a piece at a time."""
    from domi_desktop.frontdoor.portable import parse_document
    from domi_desktop.frontdoor.wire import check_values

    check_values({"document": document})
    total = len(parse_document(document))
    created: list[int] = []
    if args.dry_run:
        return {"created": created, "checked": total}
    for piece in _pieces(document["schedules"]):
        params = {"document": {**document, "schedules": piece}, "disabled": args.disabled}
        try:
            created += api.call("schedule.import", params)["created"]
        except DomiError as error:
            if not created:
                raise
            raise AppError(
                f"{error}; {len(created)} of {total} schedules were imported before it "
                f"(ids {created[0]} to {created[-1]})"
            ) from None
    return {"created": created, "checked": total}


def _pieces(schedules: list[Any]) -> list[list[Any]]:
    """The schedules in pieces that each fit in one request."""
    budget = MAX_LINE - PIECE_MARGIN
    pieces: list[list[Any]] = [[]]
    size = 0
    for index, item in enumerate(schedules):
        length = len(json.dumps(item)) + 1  # as the client writes it, with its comma
        if length > budget:
            raise UsageError(
                f"schedules[{index}] is {length:,} bytes of JSON: over the {MAX_LINE:,} bytes the"
                " app takes in one request"
            )
        if size + length > budget:
            pieces.append([])
            size = 0
        pieces[-1].append(item)
        size += length
    return pieces


def read_input(path: str, limit: int) -> bytes:
    """At most ``limit`` bytes of the file ``path``, or of stdin for ``-``."""
    try:
        if path == "-":
            return sys.stdin.buffer.read(limit)
        with open(path, "rb") as file:
            return file.read(limit)
    except OSError as error:
        raise UsageError(f"cannot read {printable(path)}: {error.strerror or error}") from None
    except ValueError:  # open() refuses a name with a NUL in it
        raise UsageError(f"cannot read {path!r}: no file name holds a NUL character") from None


def _read(path: str) -> str:
    data = read_input(path, MAX_DOCUMENT + 1)
    name = printable(path)
    if len(data) > MAX_DOCUMENT:
        raise UsageError(f"{name} is larger than {MAX_DOCUMENT // (1024 * 1024)} MB; nothing read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{name}: not UTF-8 at byte {error.start}") from None


def _write(output: str | None, text: str) -> None:
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write {printable(output)}: {error.strerror or error}") from None

"""``domi-desktop timeline``: the Timeline for the terminal: this machine's sleeps and time
without the app, then each schedule's dues with the line that says what became of each (the same
words as History and the Timeline window)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from domi_desktop.cli.backend import backend
from domi_desktop.cli.render import printable, when


def timeline(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"days": args.days}
    if args.schedule is not None:
        params["schedule_id"] = args.schedule
    with backend(args) as api:
        story = api.call("schedule.timeline", params)
    if args.json:
        print(json.dumps(story, ensure_ascii=False))
        return 0
    print(f"{printable(story['machine'])}: {when(story['start'])} – {when(story['end'])}")
    away = [span for span in story["spans"] if span["kind"] != "awake"]
    for span in away:
        what = "asleep" if span["kind"] == "asleep" else "domi-desktop not running"
        print(f"  {what}: {when(span['start'])} – {when(span['end'])} ({span['source']})")
    for pause in story.get("pauses", []):
        print(f"  {printable(pause['line'])}")
    if not story["spans"]:
        print("  nothing on record: domi-desktop has not run on this machine in that time")
    elif not away:
        print("  no sleep and no time without domi-desktop on record")
    for schedule in story["schedules"]:
        print()
        print(printable(schedule["name"]))
        if not schedule["dues"]:
            print("  no dues")
        for due in schedule["dues"]:
            print(f"  {when(due['due'], schedule['tz'])}  {printable(due['line'])}")
    return 0

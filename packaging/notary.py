"""Decide from ``notarytool``'s JSON whether Apple accepted a submission.

    xcrun notarytool submit APP.dmg ... --wait --output-format json > notary.json
    python packaging/notary.py notary.json          # exit 0 only for status "Accepted"
    python packaging/notary.py --id notary.json     # the submission id, for `notarytool log ID`

``notarytool submit --wait`` exits 0 when the submission was *processed*, whatever the verdict:
an "Invalid" (unsigned binary, no hardened runtime...) passed the old build as if notarized, and
stapling then failed with a puzzling "record not found". The verdict is the ``status`` field.
Standard library only: build_macos.sh runs it with the build's Python.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ACCEPTED = "Accepted"


class NotaryError(ValueError):
    """The output is not a notarytool JSON answer with a status."""


@dataclass(frozen=True, slots=True)
class Submission:
    id: str
    status: str
    message: str

    @property
    def accepted(self) -> bool:
        return self.status == ACCEPTED


def parse(text: str) -> Submission:
    """The last JSON object in ``text`` that has a ``status`` (progress lines may come before)."""
    decoder = json.JSONDecoder()
    found: Submission | None = None
    position = text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except ValueError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict) and isinstance(value.get("status"), str):
            found = Submission(
                id=str(value.get("id", "")),
                status=value["status"],
                message=str(value.get("message", "")),
            )
        position = text.find("{", end)
    if found is None:
        shown = text.strip()[:300] or "(nothing)"
        raise NotaryError(f"no notarytool JSON with a status in its output: {shown}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="what notarytool printed (--output-format json)")
    parser.add_argument("--id", action="store_true", help="print the submission id and exit 0")
    args = parser.parse_args(argv)
    try:
        submission = parse(args.output.read_text(encoding="utf-8", errors="replace"))
    except (OSError, NotaryError) as error:
        print(f"notary: {error}", file=sys.stderr)
        return 1
    if args.id:
        print(submission.id)
        return 0 if submission.id else 1
    verdict = f"notarization {submission.id or '(no id)'}: {submission.status}"
    if submission.message:
        verdict += f" ({submission.message})"
    if submission.accepted:
        print(verdict)
        return 0
    print(f"notary: {verdict}; only {ACCEPTED!r} passes", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())

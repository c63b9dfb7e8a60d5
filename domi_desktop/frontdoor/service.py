"""One service layer for the CLI (store opened directly) and the RPC server (the running app).

It takes and returns the JSON shapes of ``wire`` and tells the app to re-plan after each change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from itertools import islice
from typing import Any

from domi_desktop.cron import describe, next_run, upcoming
from domi_desktop.errors import CronError, DomiError, ParamError
from domi_desktop.frontdoor import holds
from domi_desktop.frontdoor.monitor_params import check_key_secret
from domi_desktop.frontdoor.portable import (
    Pieces,
    export_document,
    import_key,
    parse_document,
)
from domi_desktop.frontdoor.timeline import timeline
from domi_desktop.frontdoor.wire import (
    MAX_PREVIEW,
    MAX_RUNS_PAGE,
    Json,
    action_json,
    check_expr,
    check_name,
    check_notes,
    check_zone,
    get_param,
    id_param,
    instant_param,
    iso,
    parse_action,
    parse_policies,
    policies_json,
    run_json,
)
from domi_desktop.model import LOCAL_ZONE, Policies, RunStatus, Schedule
from domi_desktop.ports import Clock, SecretStore
from domi_desktop.scheduler import oneoff
from domi_desktop.scheduler.simulate import MAX_WAKES, simulate
from domi_desktop.store import Store


class Service:
    """Schedules, runs, previews and simulations. ``on_change(id)`` tells the app to re-plan."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        on_change: Callable[[int | None], None] | None = None,
        next_fire: Callable[[int], datetime | None] | None = None,
        secrets: SecretStore | None = None,
    ) -> None:
        """``on_change``: a schedule was made, changed or deleted (None: several, re-read them
        all). ``secrets``: where the secrets a schedule names are looked for (the OS keyring
        when not given)."""
        self._store = store
        self.clock = clock
        self._secrets = secrets
        self._pieces = Pieces()
        self._on_change = on_change or (lambda _id: None)
        self._next_fire = next_fire

    def schedule_json(self, schedule: Schedule, lang: str = "en") -> Json:
        return {
            "id": schedule.id,
            "name": schedule.name,
            "expr": schedule.expr,
            "tz": schedule.tz,
            "enabled": schedule.enabled,
            "last_due": iso(schedule.last_due),
            "next_run": iso(self.next_run_of(schedule)),
            "description": _describe(schedule.expr, lang),
            "action": action_json(schedule.action),
            "policies": policies_json(schedule.policies),
            "notes": schedule.notes,
            "created_at": iso(schedule.created_at),
            "updated_at": iso(schedule.updated_at),
            **holds.hold_json(schedule),
        }

    def next_run_of(self, schedule: Schedule) -> datetime | None:
        # Its session's moments alone run it: the expression is kept but fires nothing.
        if not schedule.enabled or schedule.policies.session.only:
            return None
        if self._next_fire is not None:
            return self._next_fire(schedule.id)
        try:
            upcoming = None
            if schedule.policies.once_at is None:
                upcoming = next_run(schedule.expr, self.clock.now(), schedule.tz)
        except DomiError:
            return None
        return oneoff.planned(schedule, upcoming)

    # -- values, for the windows (the socket and the CLI take the JSON shapes below) ----------

    def schedule(self, schedule_id: int) -> Schedule:
        return self._store.get_schedule(schedule_id)

    def schedule_count(self) -> int:
        """Never waits behind another thread's read (``Store.count_schedules``)."""
        return self._store.count_schedules()

    def paused_schedules(self, limit: int) -> list[Schedule]:
        """Disabled schedules (the planner does not know them), at most ``limit``."""
        return self._store.paused_schedules(limit)

    # -- JSON shapes ---------------------------------------------------------------------------

    def list_schedules(self) -> list[Json]:
        """Every schedule by id; one whose row cannot be read is listed disabled, with the reason
        in ``broken`` (the others have ``broken: null``), so it can be repaired or removed."""
        schedules, broken = self._store.read_schedules()
        listed = [{**self.schedule_json(s), "broken": None} for s in schedules]
        listed += [
            {"id": schedule_id, "name": "", "expr": "", "tz": "", "enabled": False,
             "last_due": None, "next_run": None, "notes": "", "broken": reason}
            for schedule_id, reason in broken.items()
        ]  # fmt: skip
        return sorted(listed, key=lambda item: int(item["id"]))

    def get_schedule(self, params: Mapping[str, Any]) -> Json:
        return self.schedule_json(self._store.get_schedule(self._id(params)))

    def create_schedule(self, params: Mapping[str, Any]) -> Json:
        policies = parse_policies(params.get("policies"))
        self._check_key_secret(policies.monitor.healthchecks_key, None)
        tz = check_zone(params.get("tz", LOCAL_ZONE))
        once = holds.one_off(params, tz, self.clock.now())
        if once is not None:
            policies = replace(policies, once_at=once[1])
        schedule = self._store.create_schedule(
            check_name(params.get("name")),
            check_expr(params.get("expr")) if once is None else once[0],
            tz,
            parse_action(params.get("action")),
            policies,
            enabled=bool(get_param(params, "enabled", bool) if "enabled" in params else True),
            notes=check_notes(params.get("notes")),
            now=self.clock.now(),
        )
        self._on_change(schedule.id)
        return self.schedule_json(schedule)

    def update_schedule(self, params: Mapping[str, Any]) -> Json:
        schedule_id = self._id(params)
        current = self._store.get_schedule(schedule_id)
        changes: dict[str, Any] = {}
        if "name" in params:
            changes["name"] = check_name(params["name"])
        if "expr" in params:
            changes["expr"] = check_expr(params["expr"])
        if "tz" in params:
            changes["tz"] = check_zone(params["tz"])
        if "action" in params:
            changes["action"] = parse_action(params["action"])
        if "policies" in params:
            changes["policies"] = parse_policies(params["policies"], current.policies)
            self._check_key_secret(
                changes["policies"].monitor.healthchecks_key,
                current.policies.monitor.healthchecks_key,
            )
        if "enabled" in params:
            changes["enabled"] = get_param(params, "enabled", bool, required=True)
        if "notes" in params:
            changes["notes"] = check_notes(params["notes"])
        changes.update(self._one_off_changes(params, current, changes))
        schedule = self._store.update_schedule(schedule_id, now=self.clock.now(), **changes)
        self._on_change(schedule_id)
        return self.schedule_json(schedule)

    def _one_off_changes(
        self, params: Mapping[str, Any], current: Schedule, changes: dict[str, Any]
    ) -> dict[str, Any]:
        """A new ``at`` makes (or moves) a one-off; a new expression alone makes it a cron
        schedule again."""
        policies = changes.get("policies", current.policies)
        once = holds.one_off(params, changes.get("tz", current.tz), self.clock.now())
        if once is not None:
            return {"expr": once[0], "policies": replace(policies, once_at=once[1], hold=None)}
        dropped = "at" in params and params["at"] is None
        if policies.once_at is not None and (
            dropped or changes.get("expr", current.expr) != current.expr
        ):
            return {"policies": replace(policies, once_at=None, hold=None)}
        return {}

    def store_update(self, schedule_id: int, policies: Policies) -> Schedule:
        """New policies (a skip or snooze): ``last_due`` stays, the engine re-plans."""
        schedule = self._store.update_schedule(schedule_id, now=self.clock.now(), policies=policies)
        self._on_change(schedule_id)
        return schedule

    def set_enabled(self, params: Mapping[str, Any], enabled: bool) -> Json:
        schedule = self._store.set_enabled(self._id(params), enabled, self.clock.now())
        self._on_change(schedule.id)
        return self.schedule_json(schedule)

    def delete_schedule(self, params: Mapping[str, Any]) -> Json:
        schedule_id = self._id(params)
        self._store.delete_schedule(schedule_id)
        self._on_change(schedule_id)
        return {"id": schedule_id, "deleted": True}

    def runs(self, params: Mapping[str, Any]) -> list[Json]:
        schedule_id = id_param(params, "schedule_id", required=False)
        status_text = get_param(params, "status", str)
        status = None
        if status_text is not None:
            try:
                status = RunStatus(status_text)
            except ValueError:
                allowed = ", ".join(s.value for s in RunStatus)
                raise ParamError(
                    "status", f"must be one of {allowed}, not {status_text!r}"
                ) from None
        limit = get_param(params, "limit", int)
        limit = 100 if limit is None else limit
        if not 1 <= limit <= MAX_RUNS_PAGE:
            raise ParamError("limit", f"must be between 1 and {MAX_RUNS_PAGE}, not {limit}")
        if schedule_id is not None:
            self._store.get_schedule(schedule_id)  # an unknown id is an error, not an empty list
        before = id_param(params, "before_id", required=False)
        runs = self._store.runs(
            schedule_id=schedule_id, status=status, limit=limit, before_id=before
        )
        return [run_json(run) for run in runs]

    def preview(self, params: Mapping[str, Any]) -> Json:
        expr = check_expr(params.get("expr"))
        tz = check_zone(params.get("tz", LOCAL_ZONE))
        count = get_param(params, "count", int)
        count = 10 if count is None else count
        if not 1 <= count <= MAX_PREVIEW:
            raise ParamError("count", f"must be between 1 and {MAX_PREVIEW}, not {count}")
        after_text = get_param(params, "after", str)
        after = self.clock.now() if after_text is None else instant_param(after_text, "after")
        lang = get_param(params, "lang", str) or "en"
        if lang not in ("en", "zh"):
            raise ParamError("lang", f"must be 'en' or 'zh', not {lang!r}")
        fires = [fire.isoformat() for fire in islice(upcoming(expr, after, tz), count)]
        return {"expr": expr, "tz": tz, "description": describe(expr, lang), "next": fires}

    def simulate(self, params: Mapping[str, Any]) -> Json:
        expr = check_expr(params.get("expr"))
        tz = check_zone(params.get("tz", LOCAL_ZONE))
        last_due = instant_param(get_param(params, "last_due", str, required=True), "last_due")
        wakes_raw = get_param(params, "wakes", list, required=True)
        if len(wakes_raw) > MAX_WAKES:  # before parsing a million of them
            raise ParamError("wakes", f"has {len(wakes_raw)} wakes, at most {MAX_WAKES}")
        wakes = [
            instant_param(wake if isinstance(wake, str) else "", f"wakes[{index}]")
            for index, wake in enumerate(wakes_raw)
        ]
        result = simulate(expr, tz, last_due, wakes, parse_policies(params.get("policies")))
        return {"wakes": [wake.to_json() for wake in result]}

    def export(self, params: Mapping[str, Any]) -> Json:
        """The export document of the schedules named by ``ids`` (all when absent)."""
        ids = get_param(params, "ids", list)
        if ids is None:
            return export_document(self._store.list_schedules())
        checked = [id_param({"ids": i}, "ids") for i in ids]
        return export_document([self._store.get_schedule(i) for i in checked if i is not None])

    def import_(self, params: Mapping[str, Any]) -> Json:
        """Create the schedules of an export document, all or none; ``dry_run`` only checks.

        A document too large for one request comes in pieces (``piece``: its ``id``, ``index``
        and ``count``); they are kept here, checked, and the schedules made only with the last,
        in one transaction: a sender stopped halfway leaves nothing made. The same schedules
        imported again make nothing (``existing`` names those made the first time)."""
        piece = get_param(params, "piece", dict)
        portables = parse_document(params.get("document"))
        disabled = bool(get_param(params, "disabled", bool))
        if get_param(params, "dry_run", bool):
            return {"created": [], "checked": len(portables)}
        items = params["document"]["schedules"]
        if piece is not None:
            whole = self._pieces.add(piece, items, portables)
            if whole is None:
                return {"created": [], "checked": len(portables), "waiting": True}
            items, portables = whole
        schedules = [
            Schedule(0, item.name, item.expr, item.tz, item.action,
                     enabled=item.enabled and not disabled, policies=item.policies,
                     notes=item.notes)
            for item in portables
        ]  # fmt: skip
        made, existing = self._store.import_schedules(
            schedules, import_key(items), now=self.clock.now()
        )
        ids = [schedule.id for schedule in made]
        if ids and not existing:
            # Told once for the lot (None: re-read them all): one re-plan, not one per schedule.
            self._on_change(ids[0] if len(ids) == 1 else None)
        if existing:
            return {"created": [], "existing": ids, "checked": len(portables)}
        return {"created": ids, "checked": len(portables)}

    def _check_key_secret(self, name: str | None, before: str | None) -> None:
        """A Healthchecks API key's secret, typed or changed, must exist (unchanged ones are
        not asked again: a keyring may be locked now)."""
        if name is None or name == before:
            return
        if self._secrets is None:
            from domi_desktop.secrets import KeyringSecretStore

            self._secrets = KeyringSecretStore()
        check_key_secret(name, self._secrets)

    @staticmethod
    def _id(params: Mapping[str, Any]) -> int:
        value = id_param(params)
        assert value is not None
        return value


def _describe(expr: str, lang: str) -> str:
    try:
        return describe(expr, lang)
    except CronError as error:
        return f"invalid: {error.message}"


Method = Callable[[Service, Mapping[str, Any]], Any]

METHODS: dict[str, Method] = {
    "schedule.list": lambda service, _params: service.list_schedules(),
    "schedule.get": Service.get_schedule,
    "schedule.create": Service.create_schedule,
    "schedule.update": Service.update_schedule,
    "schedule.delete": Service.delete_schedule,
    "schedule.enable": lambda service, params: service.set_enabled(params, True),
    "schedule.disable": lambda service, params: service.set_enabled(params, False),
    "schedule.runs": Service.runs,
    "schedule.timeline": lambda service, params: timeline(service._store, service.clock, params),
    "schedule.preview": Service.preview,
    "schedule.simulate": Service.simulate,
    "schedule.export": Service.export,
    "schedule.import": Service.import_,
    "schedule.skip": holds.skip,
    "schedule.snooze": holds.snooze,
}
"""The methods both front doors share; the app adds run_now, app.* and events.subscribe."""

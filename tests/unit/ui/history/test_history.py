from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from domi_desktop.cron import set_local_resolver
from domi_desktop.model import (
    CommandAction,
    FireClaim,
    Run,
    RunStatus,
    Schedule,
    SkipReason,
    Trigger,
)
from domi_desktop.store import DB_FILENAME, Store
from domi_desktop.ui import i18n
from domi_desktop.ui.history.log import LogDialog, LogTail, read_log_tail, run_log
from domi_desktop.ui.history.model import PAGE_SIZE, Column, RunsModel
from domi_desktop.ui.history.window import HistoryWindow

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # a Monday; Berlin is on CET (UTC+1)
MINUTE = timedelta(minutes=1)
ACTION = CommandAction(argv=("report",))


@pytest.fixture(autouse=True)
def berlin() -> Iterator[None]:
    """The OS zone the history shows times in."""
    set_local_resolver(lambda: ZoneInfo("Europe/Berlin"))
    yield
    set_local_resolver(None)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "data", now=NOW) as opened:
        yield opened


@pytest.fixture
def window(qtbot: QtBot, store: Store) -> Callable[[], HistoryWindow]:
    def build() -> HistoryWindow:
        built = HistoryWindow(store)
        qtbot.addWidget(built)
        return built

    return build


def add_schedule(store: Store, name: str) -> Schedule:
    return store.create_schedule(name, "0 9 * * *", "Europe/Berlin", ACTION, now=NOW)


def claim(
    store: Store, schedule: Schedule, last_due: datetime, due: datetime, **kwargs: Any
) -> int:
    run_id = store.claim_fire(FireClaim(schedule.id, expected_last_due=last_due, due=due, **kwargs))
    assert run_id is not None
    return run_id


def finish(
    store: Store,
    run_id: int,
    started: datetime,
    took: timedelta,
    status: RunStatus = RunStatus.succeeded,
    exit_code: int = 0,
    log_path: Path | None = None,
) -> None:
    store.start_run(run_id, started, log_path=log_path)
    store.finish_run(run_id, status=status, finished_at=started + took, exit_code=exit_code)


def fill(store: Store, schedule: Schedule, claims: int, per_claim: int = 100) -> None:
    """``claims * per_claim`` runs of ``schedule``: each claim records a fire and its skipped."""
    last_due = store.get_schedule(schedule.id).last_due
    assert last_due is not None
    for _ in range(claims):
        due = last_due + per_claim * MINUTE
        skipped = [last_due + n * MINUTE for n in range(1, per_claim)]
        claim(
            store, schedule, last_due, due, fired_at=due, missed_count=len(skipped), skipped=skipped
        )
        last_due = due


def texts(model: RunsModel, row: int) -> list[str]:
    return [model.index(row, column).data() for column in range(model.columnCount())]


@pytest.fixture
def example(store: Store) -> dict[str, Schedule]:
    """The SPEC's running example after a night asleep, and a backup that failed when run by hand."""
    report = add_schedule(store, "login report")
    backup = add_schedule(store, "backup")
    due = datetime(2026, 3, 3, 8, 0, tzinfo=UTC)  # 09:00 in Berlin
    opened = due + timedelta(hours=1, minutes=2)
    catch_up = claim(
        store,
        report,
        NOW,
        due,
        fired_at=opened,
        trigger=Trigger.catch_up,
        late=True,
        missed_count=2,
        skipped=[due - timedelta(hours=2), due - timedelta(hours=1)],
    )
    finish(store, catch_up, opened, timedelta(seconds=75))
    manual = store.record_manual_run(backup.id, opened + MINUTE)
    finish(store, manual, opened + MINUTE, timedelta(seconds=4.25), RunStatus.failed, 2)
    return {"report": report, "backup": backup}


def test_runs_are_listed_newest_first_with_times_in_the_local_zone(
    qtbot: QtBot, store: Store, example: dict[str, Schedule]
) -> None:
    model = RunsModel(store)
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert headers == [
        "Schedule",
        "Due",
        "Started",
        "Status",
        "Reason",
        "Trigger",
        "Late",
        "Missed",
        "Duration",
        "Exit code",
    ]
    assert [texts(model, row) for row in range(model.rowCount())] == [
        [
            "backup",
            "",
            "Tue 2026-03-03 10:03",
            "failed",
            "",
            "manual",
            "",
            "",
            "4.2 s",
            "2",
        ],
        [
            "login report",
            "Tue 2026-03-03 09:00",
            "Tue 2026-03-03 10:02",
            "succeeded",
            "",
            "catch-up",
            "yes",
            "2",
            "1 min 15 s",
            "0",
        ],
        [
            "login report",
            "Tue 2026-03-03 08:00",
            "",
            "skipped",
            "missed while asleep",
            "scheduled",
            "",
            "",
            "",
            "",
        ],
        [
            "login report",
            "Tue 2026-03-03 07:00",
            "",
            "skipped",
            "missed while asleep",
            "scheduled",
            "",
            "",
            "",
            "",
        ],
    ]
    assert model.run_at(1).trigger is Trigger.catch_up


def test_status_colours_and_tooltips_say_what_needs_attention(
    qtbot: QtBot, store: Store, example: dict[str, Schedule]
) -> None:
    model = RunsModel(store)

    def colour(row: int) -> str:
        return QColor(model.index(row, 3).data(Qt.ItemDataRole.ForegroundRole).color()).name()

    def tooltip(row: int) -> str:
        return str(model.index(row, 0).data(Qt.ItemDataRole.ToolTipRole))

    assert colour(0) == "#c62828"  # failed: red
    assert colour(1) == "#b06d00"  # late: amber
    assert tooltip(1) == (
        "Ran late: due Tue 2026-03-03 09:00, started Tue 2026-03-03 10:02\nEarlier runs skipped: 2"
    )
    assert tooltip(2) == "Missed: the computer was asleep or off at the due time"


def test_filters_narrow_the_runs_and_the_count(
    qtbot: QtBot, window: Callable[[], HistoryWindow], example: dict[str, Schedule]
) -> None:
    history = window()
    assert history.run_count.text() == "4 runs"
    schedules = [
        history.schedule_filter.itemText(i) for i in range(history.schedule_filter.count())
    ]
    assert schedules == ["All schedules", "login report", "backup"]

    history.status_filter.setCurrentIndex(history.status_filter.findData("failed"))
    assert history.model.rowCount() == 1
    assert history.run_count.text() == "1 run"

    history.status_filter.setCurrentIndex(history.status_filter.findData("skipped"))
    history.schedule_filter.setCurrentIndex(history.schedule_filter.findData(example["report"].id))
    assert history.model.rowCount() == 2
    assert history.run_count.text() == "2 runs"

    history.schedule_filter.setCurrentIndex(history.schedule_filter.findData(example["backup"].id))
    assert history.model.rowCount() == 0
    assert history.run_count.text() == "0 runs"


def test_show_schedule_opens_on_that_schedule_whatever_the_filters_were(
    qtbot: QtBot, window: Callable[[], HistoryWindow], example: dict[str, Schedule]
) -> None:
    history = window()
    history.status_filter.setCurrentIndex(history.status_filter.findData("failed"))
    history.show_schedule(example["report"].id)
    assert history.isVisible()
    assert history.status_filter.currentData() is None
    assert history.schedule_filter.currentText() == "login report"
    assert {history.model.run_at(row).schedule_id for row in range(history.model.rowCount())} == {
        example["report"].id
    }
    assert history.run_count.text() == "3 runs"

    history.show_schedule(None)
    assert history.schedule_filter.currentText() == "All schedules"
    assert history.run_count.text() == "4 runs"


def test_the_model_reads_a_page_at_a_time(qtbot: QtBot, store: Store) -> None:
    fill(store, add_schedule(store, "every minute"), claims=10)
    model = RunsModel(store)
    sizes = [model.rowCount()]
    while model.canFetchMore():
        model.fetchMore()
        sizes.append(model.rowCount())
    assert sizes == [200, 400, 600, 800, 1000, 1000]
    ids = [model.run_at(row).id for row in range(model.rowCount())]
    assert ids == sorted(ids, reverse=True)
    assert len(set(ids)) == 1000


def test_scrolling_to_the_bottom_loads_the_next_page(
    qtbot: QtBot, store: Store, window: Callable[[], HistoryWindow]
) -> None:
    fill(store, add_schedule(store, "every minute"), claims=5)
    history = window()
    history.show()
    qtbot.waitExposed(history)
    assert history.model.rowCount() == PAGE_SIZE
    history.table.scrollToBottom()
    qtbot.waitUntil(lambda: history.model.rowCount() == 2 * PAGE_SIZE)
    assert history.run_count.text() == "500 runs"


def test_a_history_of_100000_runs_opens_reading_one_page(
    qtbot: QtBot,
    store: Store,
    window: Callable[[], HistoryWindow],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One real run per schedule recorded by the store, then copied in SQL: recording 100,000 runs
    # through the store takes seconds of Peewee query building, which is not what is tested here.
    for number in range(100):
        schedule = add_schedule(store, f"job {number}")
        claim(store, schedule, NOW, NOW + MINUTE, fired_at=NOW + MINUTE)
    with closing(sqlite3.connect(store.data_dir / DB_FILENAME)) as connection, connection:
        columns = [
            f'"{row[1]}"'
            for row in connection.execute("PRAGMA table_info(runs)")
            if row[1] not in ("id", "due")
        ]
        connection.execute(
            f"""WITH RECURSIVE copy(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM copy WHERE n < 999)
            INSERT INTO runs (due, {", ".join(columns)})
            SELECT due - n * 60000000, {", ".join(columns)} FROM runs, copy ORDER BY n DESC"""
        )
    pages: list[int | None] = []
    runs = store.runs

    def counting_runs(*args: Any, **kwargs: Any) -> Any:
        pages.append(kwargs.get("before_id"))
        return runs(*args, **kwargs)

    monkeypatch.setattr(store, "runs", counting_runs)
    history = window()
    history.show()
    qtbot.waitExposed(history)
    qtbot.wait(50)  # let the view run its deferred layout and fetch-more checks
    assert pages == [None]
    assert history.model.rowCount() == PAGE_SIZE
    assert history.run_count.text() == "100,000 runs"


def test_refresh_adds_new_runs_on_top_without_moving_the_rows_in_view(
    qtbot: QtBot, store: Store, window: Callable[[], HistoryWindow]
) -> None:
    schedule = add_schedule(store, "every minute")
    fill(store, schedule, claims=4)
    history = window()
    history.show()
    qtbot.waitExposed(history)
    history.table.scrollTo(history.rows.index(100, 0), history.table.ScrollHint.PositionAtTop)
    history.table.selectRow(102)
    in_view = history.model.run_at(history.table.rowAt(0)).id
    selected = history.model.run_at(102).id

    manual = store.record_manual_run(schedule.id, NOW + timedelta(days=1))
    history.refresh()

    assert history.model.run_at(0).id == manual
    assert history.model.rowCount() == PAGE_SIZE + 1
    assert history.model.run_at(history.table.rowAt(0)).id == in_view
    selected_run = history.selected_run()
    assert selected_run is not None
    assert selected_run.id == selected
    assert history.run_count.text() == "401 runs"


def test_refresh_shows_how_runs_ended_even_far_below_the_newest_page(
    qtbot: QtBot, store: Store, window: Callable[[], HistoryWindow]
) -> None:
    schedule = add_schedule(store, "every minute")
    long_job = store.record_manual_run(schedule.id, NOW)
    fill(store, schedule, claims=3)
    history = window()
    history.model.fetchMore()
    history.model.fetchMore()
    row = history.model.rowCount() - 1
    assert history.model.run_at(row).id == long_job
    assert history.model.index(row, 3).data() == "running"

    finish(store, long_job, NOW, timedelta(hours=2), RunStatus.failed, 1)
    history.refresh()

    assert history.model.rowCount() == 301
    assert history.model.index(row, Column.status).data() == "failed"
    assert history.model.index(row, Column.duration).data() == "2 h 00 min"


def test_refresh_starts_over_when_a_run_leaves_the_filter(
    qtbot: QtBot, store: Store, window: Callable[[], HistoryWindow]
) -> None:
    schedule = add_schedule(store, "every minute")
    first = store.record_manual_run(schedule.id, NOW)
    second = store.record_manual_run(schedule.id, NOW + MINUTE)
    history = window()
    history.status_filter.setCurrentIndex(history.status_filter.findData("running"))
    assert history.model.rowCount() == 2

    finish(store, second, NOW + MINUTE, MINUTE)
    history.refresh()

    assert [history.model.run_at(row).id for row in range(history.model.rowCount())] == [first]
    assert history.run_count.text() == "1 run"


def test_refresh_after_more_new_runs_than_a_page_starts_at_the_newest(
    qtbot: QtBot, store: Store, window: Callable[[], HistoryWindow]
) -> None:
    schedule = add_schedule(store, "every minute")
    fill(store, schedule, claims=1)
    history = window()
    fill(store, schedule, claims=3)
    history.refresh()
    assert history.model.rowCount() == PAGE_SIZE
    assert history.model.run_at(0).id == max(run.id for run in store.runs(limit=1))


def test_refresh_follows_a_deleted_schedule_back_to_all_schedules(
    qtbot: QtBot, store: Store, window: Callable[[], HistoryWindow], example: dict[str, Schedule]
) -> None:
    history = window()
    history.show_schedule(example["backup"].id)
    store.delete_schedule(example["backup"].id)
    history.refresh()
    assert history.schedule_filter.currentData() is None
    assert history.model.rowCount() == 3


def test_open_log_shows_the_log_of_the_selected_run(
    qtbot: QtBot, store: Store, window: Callable[[], HistoryWindow]
) -> None:
    schedule = add_schedule(store, "report")
    run_id = store.record_manual_run(schedule.id, NOW)
    log_path = store.log_path_for(run_id)
    log_path.write_text("connecting\nrate limit: 120/min\n", encoding="utf-8")
    finish(store, run_id, NOW, MINUTE, log_path=log_path)
    history = window()
    assert not history.open_log_button.isEnabled()
    history.table.selectRow(0)
    assert history.details.text().startswith("Run 1 of “report”")

    qtbot.mouseClick(history.open_log_button, Qt.MouseButton.LeftButton)

    dialog = history.findChild(LogDialog)
    assert dialog is not None
    assert dialog.isVisible()
    assert dialog.view.toPlainText() == "connecting\nrate limit: 120/min\n"
    assert dialog.view.isReadOnly()
    assert dialog.note.isHidden()


def test_double_clicking_a_run_opens_its_log_and_a_missing_log_says_so(
    qtbot: QtBot, store: Store, window: Callable[[], HistoryWindow]
) -> None:
    schedule = add_schedule(store, "report")
    run_id = store.record_manual_run(schedule.id, NOW)
    finish(store, run_id, NOW, MINUTE, log_path=store.log_dir / "gone.log")
    history = window()
    history.show()
    qtbot.waitExposed(history)
    rect = history.table.visualRect(history.rows.index(0, 1))
    # A real double click is press, release, press, double-click; QTest's mouseDClick sends only
    # the second half, and a view ignores a double-click on a row it did not see pressed.
    qtbot.mouseClick(history.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(history.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())

    dialog = history.findChild(LogDialog)
    assert dialog is not None
    assert dialog.note.text() == (
        f"The log file {store.log_dir / 'gone.log'} no longer exists (deleted or moved)."
    )
    assert dialog.view.isHidden()


def test_a_long_log_is_shown_from_a_line_start_near_its_end(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_bytes(b"".join(b"line %04d \xc3\xa9\n" % n for n in range(1000)))  # 13 bytes a line
    tail = read_log_tail(str(log), limit=1300)
    assert tail.text.splitlines()[0] == "line 0901 é"
    assert tail.text.endswith("line 0999 é\n")
    assert tail.note == "Showing the last 1 KB of 13 KB."


@pytest.mark.parametrize(
    ("status", "started", "note"),
    [
        (RunStatus.skipped, None, "This run was skipped, so it has no log."),
        (RunStatus.interrupted, None, "This run has no log: it never started."),
        (RunStatus.succeeded, NOW, "No log was kept for this run."),
    ],
)
def test_a_run_without_a_log_file_says_why(
    status: RunStatus, started: datetime | None, note: str
) -> None:
    run = Run(1, 1, status, Trigger.scheduled, NOW, NOW, started_at=started)
    assert run_log(run) == LogTail("", note)


@pytest.mark.parametrize(
    ("status", "tail", "note"),
    [
        (RunStatus.running, None, "Nothing printed yet."),
        (RunStatus.succeeded, "", "This run printed nothing."),
        (RunStatus.succeeded, "done\n", "The log file {path} no longer exists (deleted or moved)."),
    ],
)
def test_a_log_file_not_there_says_whether_nothing_was_printed_or_it_went(
    tmp_path: Path, status: RunStatus, tail: str | None, note: str
) -> None:
    path = str(tmp_path / "run-1.log")
    run = Run(
        1, 1, status, Trigger.scheduled, NOW, NOW, started_at=NOW, log_path=path, output_tail=tail
    )
    assert run_log(run) == LogTail("", note.format(path=path))


def test_an_empty_log_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty.log").touch()
    assert read_log_tail(str(tmp_path / "empty.log")) == LogTail("", "The log is empty.")


def test_every_text_of_the_window_is_translated_to_chinese(
    qtbot: QtBot, store: Store, window: Callable[[], HistoryWindow], example: dict[str, Schedule]
) -> None:
    i18n.set_language("zh")
    i18n.reset_missing()
    try:
        history = window()
        history.table.selectRow(1)
        model = history.model
        for column in range(model.columnCount()):
            model.headerData(column, Qt.Orientation.Horizontal)
            for row in range(model.rowCount()):
                for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                    model.index(row, column).data(role)
        history.open_log()
        assert i18n.missing() == set()
        assert history.windowTitle() == "运行历史 — domi-desktop"
        assert history.run_count.text() == "4 次运行"
        assert texts(model, 1)[1:6] == [
            "周二 2026-03-03 09:00",
            "周二 2026-03-03 10:02",
            "成功",
            "",
            "补运行",
        ]
        assert texts(model, 2)[Column.reason] == "睡眠中错过"
    finally:
        i18n.set_language("en")


def test_the_reason_column_says_why_and_a_stopped_run_says_stopped(
    qtbot: QtBot, store: Store, window: Callable[[], HistoryWindow]
) -> None:
    report = add_schedule(store, "report")
    due = datetime(2026, 3, 3, 8, 0, tzinfo=UTC)
    last = NOW
    for status, reason in (
        (RunStatus.skipped, SkipReason.paused),
        (RunStatus.skipped, SkipReason.busy),
        (RunStatus.waiting, "waiting for the charger"),
    ):
        claim(store, report, last, due, fired_at=due, status=status, reason=reason)
        last, due = due, due + timedelta(hours=1)
    stopped = claim(store, report, last, due, fired_at=due)
    store.start_run(stopped, due)
    store.finish_run(stopped, status=RunStatus.failed, finished_at=due + MINUTE, exit_code=-15,
                     reason="stopped by the user")  # fmt: skip
    history = window()
    model = history.model
    rows = {model.run_at(row).id: texts(model, row) for row in range(model.rowCount())}
    assert [row[Column.reason] for row in rows.values()] == [
        "stopped", "waiting for the charger", "busy", "paused",
    ]  # fmt: skip
    assert rows[stopped][Column.exit_code] == "stopped"  # not the -15 of the app's signal

    for row in range(model.rowCount()):
        history.table.selectRow(row)
        details = history.details.text()
        if model.run_at(row).status in (RunStatus.skipped, RunStatus.waiting):
            assert "fired" not in details and "due Tue 2026-03-03" in details
        else:
            assert "exit code" not in details and "stopped" in details
    i18n.set_language("zh")
    try:
        history.retranslate()
        assert texts(model, 1)[Column.reason] == "正在等待充电器"
        assert texts(model, 0)[Column.reason] == "已停止"
    finally:
        i18n.set_language("en")


def test_columns_fit_again_when_the_filter_changes(
    qtbot: QtBot, store: Store, example: dict[str, Schedule], window: Callable[[], HistoryWindow]
) -> None:
    history = window()
    history.show_schedule(example["backup"].id)  # no reason to show: a narrow column
    narrow = history.table.columnWidth(Column.reason)
    history.show_schedule(None)  # "missed while asleep" now
    needed = history.table.fontMetrics().horizontalAdvance("missed while asleep")
    assert history.table.columnWidth(Column.reason) >= needed > narrow


def test_the_schedule_filter_offers_schedules_made_while_it_is_open(
    qtbot: QtBot, store: Store, example: dict[str, Schedule], window: Callable[[], HistoryWindow]
) -> None:
    history = window()
    made = add_schedule(store, "made later")
    history.schedules_changed()
    assert history.schedule_filter.findData(made.id) > 0

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domi_desktop.crontab import (
    Crontab,
    CrontabEntry,
    CrontabProblem,
    Severity,
    read_crontab,
    to_action,
)
from domi_desktop.model import CommandAction

USER_CRONTAB = r"""# Edit this file to introduce tasks to be run by cron.
SHELL=/bin/sh
PATH = /home/me/bin:/usr/local/bin:/usr/bin:/bin
MAILTO=""
# m h  dom mon dow   command
*/15 * * * *   /home/me/bin/sync-notes.sh >/dev/null 2>&1
0 9 * * mon-fri  cd /srv/reports && ./rate_limit_report.py --endpoint login

   @daily tar czf /backup/home-$(date +\%F).tgz /home/me/Documents
30 8 * * 1 mail -s "Standup" team@example.com%Hi team,%see you at 9.%%-- me
LANG='C.UTF-8'
@hourly /usr/bin/python3 /home/me/bin/poll.py
"""

ETC_CRONTAB = """\
# /etc/crontab: system-wide crontab
# Unlike any other crontab you don't have to run the `crontab'
# command to install the new version when you edit this file
# and files in /etc/cron.d. These files also have username fields,
# that none of the other crontabs do.

SHELL=/bin/sh
PATH=/usr/local/sbin:/usr/local/bin:/sbin:/bin:/usr/sbin:/usr/bin

# Example of job definition:
# .---------------- minute (0 - 59)
# |  .------------- hour (0 - 23)
# |  |  .---------- day of month (1 - 31)
# |  |  |  .------- month (1 - 12) OR jan,feb,mar,apr ...
# |  |  |  |  .---- day of week (0 - 6) (Sunday=0 or 7) OR sun,mon,tue,wed,thu,fri,sat
# |  |  |  |  |
# *  *  *  *  * user-name command to be executed
17 *\t* * *\troot\tcd / && run-parts --report /etc/cron.hourly
25 6\t* * *\troot\ttest -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.daily; }
47 6\t* * 7\troot\ttest -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.weekly; }
52 6\t1 * *\troot\ttest -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.monthly; }
#
"""


def only_entry(text: str, *, system: bool = False) -> CrontabEntry:
    crontab = read_crontab(text, system=system)
    assert len(crontab.entries) == 1, crontab
    return crontab.entries[0]


def problems_on(crontab: Crontab, line: int) -> list[CrontabProblem]:
    return [problem for problem in crontab.problems if problem.line == line]


def only_problem(text: str, *, system: bool = False, severity: str | None = None) -> CrontabProblem:
    problems = [
        problem
        for problem in read_crontab(text, system=system).problems
        if severity is None or problem.severity == severity
    ]
    assert len(problems) == 1, problems
    return problems[0]


# --- user crontabs --------------------------------------------------------------------------


def test_a_realistic_user_crontab_imports_every_job_with_its_environment() -> None:
    crontab = read_crontab(USER_CRONTAB)

    assert crontab.problems == ()
    assert [(e.line, e.expr, e.user) for e in crontab.entries] == [
        (6, "*/15 * * * *", None),
        (7, "0 9 * * mon-fri", None),
        (9, "@daily", None),
        (10, "30 8 * * 1", None),
        (12, "@hourly", None),
    ]
    sync, report, backup, standup, poll = crontab.entries
    assert sync.command == "/home/me/bin/sync-notes.sh >/dev/null 2>&1"
    assert sync.stdin is None
    assert report.command == "cd /srv/reports && ./rate_limit_report.py --endpoint login"
    assert backup.command == "tar czf /backup/home-$(date +%F).tgz /home/me/Documents"
    assert standup.command == 'mail -s "Standup" team@example.com'
    assert standup.stdin == "Hi team,\nsee you at 9.\n\n-- me\n"
    base_env = (
        ("SHELL", "/bin/sh"),
        ("PATH", "/home/me/bin:/usr/local/bin:/usr/bin:/bin"),
        ("MAILTO", ""),
    )
    assert standup.env == base_env
    assert poll.env == (*base_env, ("LANG", "C.UTF-8"))
    assert [e.name for e in crontab.entries] == [
        "sync-notes.sh (line 6)",
        "rate_limit_report.py (line 7)",
        "tar (line 9)",
        "mail (line 10)",
        "poll.py (line 12)",
    ]
    assert [(n, name) for n, name, _ in crontab.assignments] == [
        (2, "SHELL"),
        (3, "PATH"),
        (4, "MAILTO"),
        (11, "LANG"),
    ]
    assert all(e.tz is None for e in crontab.entries)


def test_the_time_fields_are_joined_by_single_spaces_whatever_the_blanks() -> None:
    entry = only_entry("\t 0\t9 *   * 1-5\t\techo hi  \n")
    assert entry.expr == "0 9 * * 1-5"
    # The command keeps its own blanks: cron hands the rest of the line to the shell as is.
    assert entry.command == "echo hi  "


def test_a_percent_sign_ends_the_command_and_the_rest_is_stdin_with_newlines() -> None:
    # The seed's lab line: stdin was observed as 'first\nsecond\n' under Debian cron.
    entry = only_entry("* * * * * /usr/bin/python3 worker.py percent%first%second\n")
    assert entry.command == "/usr/bin/python3 worker.py percent"
    assert entry.stdin == "first\nsecond\n"


def test_escaped_percent_signs_stay_literal_in_the_command_and_in_stdin() -> None:
    entry = only_entry(r"0 0 * * * printf '100\% %s' x%50\% off%" + "\n")
    assert entry.command == "printf '100% "
    assert entry.stdin == "s' x\n50% off\n"


def test_other_backslashes_are_left_for_the_shell_to_interpret() -> None:
    entry = only_entry(r"0 0 * * * echo a\ b \\%in\put\\" + "\n")
    assert entry.command == r"echo a\ b \\"
    assert entry.stdin == "in\\put\\\\\n"


def test_a_percent_at_the_very_end_gives_an_empty_stdin() -> None:
    entry = only_entry("0 0 * * * cat%\n")
    assert entry.command == "cat"
    assert entry.stdin == ""


def test_a_command_that_is_only_stdin_is_an_error() -> None:
    problem = only_problem("0 0 * * * %hello\n")
    assert problem.severity == "error"
    assert problem.column == 11
    assert "the command is empty" in problem.message


# --- environment lines ----------------------------------------------------------------------


def test_environment_lines_apply_only_to_the_entries_below_and_a_later_one_replaces() -> None:
    crontab = read_crontab(
        "A=1\n0 1 * * * first\nB = two words \nA=3\n0 2 * * * second\n", system=False
    )
    first, second = crontab.entries
    assert first.env == (("A", "1"),)
    # cron replaces the value in place: the name keeps its first position.
    assert second.env == (("A", "3"), ("B", "two words"))


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ('GREETING="  hello  "', "  hello  "),
        ("GREETING = 'a \"b\"'  ", 'a "b"'),
        ('GREETING=""', ""),
        ("GREETING=plain value \t", "plain value"),
        ("GREETING=a=b", "a=b"),
    ],
)
def test_environment_values_lose_their_quotes_and_unquoted_trailing_blanks(
    line: str, value: str
) -> None:
    crontab = read_crontab(line + "\n0 0 * * * true\n")
    assert crontab.problems == ()
    assert crontab.entries[0].env == (("GREETING", value),)


@pytest.mark.parametrize(
    ("line", "column", "words"),
    [
        ("EMPTY=", 7, 'quotes for an empty variable, EMPTY=""'),
        ('OPEN="abc', 6, 'unterminated " quote'),
        ('AFTER="a"b', 10, "text after the closing quote"),
        ("FOO-BAR=1", 1, "'FOO-BAR' is not a valid environment variable name"),
    ],
)
def test_environment_lines_cron_would_reject_are_errors(line: str, column: int, words: str) -> None:
    crontab = read_crontab(line + "\n0 0 * * * env\n")
    (problem,) = crontab.problems
    assert (problem.line, problem.column, problem.severity) == (1, column, "error")
    assert words in problem.message
    assert crontab.entries[0].env == ()


def test_a_mailto_address_warns_that_output_goes_to_the_run_log_instead() -> None:
    crontab = read_crontab("MAILTO=me@example.com\n0 0 * * * backup\n")
    (problem,) = crontab.problems
    assert (problem.line, problem.column, problem.severity) == (1, 8, "warning")
    assert "does not send mail" in problem.message
    assert "run log" in problem.message
    assert crontab.entries[0].env == (("MAILTO", "me@example.com"),)


def test_an_empty_mailto_already_means_no_mail_and_is_not_worth_a_warning() -> None:
    assert read_crontab('MAILTO=""\n0 0 * * * backup\n').problems == ()


def test_a_shell_other_than_bin_sh_is_kept_in_the_environment_with_a_warning() -> None:
    crontab = read_crontab("SHELL=/bin/bash\n0 0 * * * [[ -f x ]] && echo x\n")
    (problem,) = crontab.problems
    assert (problem.line, problem.severity) == (1, "warning")
    assert "/bin/sh" in problem.message
    assert "/bin/bash -c" in problem.message
    assert to_action(crontab.entries[0]).env == (("SHELL", "/bin/bash"),)


def test_cron_tz_sets_the_zone_of_the_entries_below_and_wins_over_tz() -> None:
    crontab = read_crontab(
        "0 0 * * * before\nTZ=:America/New_York\n0 1 * * * tz\n"
        "CRON_TZ=Asia/Shanghai\n0 2 * * * cron_tz\n"
    )
    assert crontab.problems == ()
    assert [e.tz for e in crontab.entries] == [None, "America/New_York", "Asia/Shanghai"]


def test_an_unknown_zone_is_a_warning_and_the_entries_keep_the_local_zone() -> None:
    crontab = read_crontab("CRON_TZ=Mars/Olympus_Mons\n0 0 * * * x\n")
    (problem,) = crontab.problems
    assert (problem.line, problem.severity) == (1, "warning")
    assert "unknown time zone" in problem.message
    assert crontab.entries[0].tz is None


def test_cron_does_not_expand_variables_in_environment_values_and_the_reader_says_so() -> None:
    crontab = read_crontab("PATH=$HOME/bin:$PATH\n0 0 * * * x\n")
    (problem,) = crontab.problems
    assert problem.severity == "warning"
    assert "literally '$HOME/bin:$PATH'" in problem.message
    assert crontab.entries[0].env == (("PATH", "$HOME/bin:$PATH"),)


def test_a_comment_after_an_environment_value_is_part_of_the_value() -> None:
    crontab = read_crontab("LEVEL=debug # too chatty\n0 0 * * * x\n")
    (problem,) = crontab.problems
    assert (problem.severity, problem.column) == ("warning", 13)
    assert crontab.entries[0].env == (("LEVEL", "debug # too chatty"),)


# --- system crontabs ------------------------------------------------------------------------


def test_a_realistic_etc_crontab_with_run_parts_lines_is_read_with_users() -> None:
    crontab = read_crontab(ETC_CRONTAB, system=True)

    assert [(e.line, e.expr, e.user, e.name) for e in crontab.entries] == [
        (18, "17 * * * *", "root", "cron.hourly (line 18)"),
        (19, "25 6 * * *", "root", "cron.daily (line 19)"),
        (20, "47 6 * * 7", "root", "cron.weekly (line 20)"),
        (21, "52 6 1 * *", "root", "cron.monthly (line 21)"),
    ]
    assert crontab.entries[1].command == (
        "test -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.daily; }"
    )
    assert crontab.entries[0].env == (
        ("SHELL", "/bin/sh"),
        ("PATH", "/usr/local/sbin:/usr/local/bin:/sbin:/bin:/usr/sbin:/usr/bin"),
    )
    # Nothing is wrong, but the jobs will not run as root any more: each line says so once.
    assert {(p.line, p.severity) for p in crontab.problems} == {
        (18, "info"),
        (19, "info"),
        (20, "info"),
        (21, "info"),
    }
    assert all("runs this as 'root'" in p.message for p in crontab.problems)
    assert crontab.problems[0].column == 12


def test_a_cron_d_line_for_another_user_keeps_the_user() -> None:
    entry = only_entry("*/5 * * * * www-data php /var/www/cron.php\n", system=True)
    assert (entry.user, entry.command, entry.name) == (
        "www-data",
        "php /var/www/cron.php",
        "cron.php (line 1)",
    )


# --- the seed's traps -----------------------------------------------------------------------


def test_trap_1_a_user_table_line_starting_with_root_is_imported_with_a_warning() -> None:
    crontab = read_crontab("0 0 * * * root /usr/sbin/logrotate /etc/logrotate.conf\n")
    (entry,) = crontab.entries
    # It is imported as cron would run it: the shell is asked to run a command named 'root'.
    assert entry.command == "root /usr/sbin/logrotate /etc/logrotate.conf"
    (problem,) = crontab.problems
    assert (problem.line, problem.column, problem.severity) == (1, 11, "warning")
    assert problem.message == (
        "looks like a system-crontab line: 'root' would be run as a command; "
        "use --system if this is /etc/crontab or /etc/cron.d"
    )


def test_trap_1_also_knows_the_user_names_the_caller_passes() -> None:
    text = "0 0 * * * alice /home/alice/bin/x\n"
    assert read_crontab(text).problems == ()
    (problem,) = read_crontab(text, known_users=frozenset({"alice"})).problems
    assert "'alice' would be run as a command" in problem.message


@pytest.mark.parametrize(
    ("line", "user", "column", "reason"),
    [
        ("0 9 * * * /usr/bin/backup --full", "/usr/bin/backup", 11, "looks like a command"),
        ("0 9 * * * echo hello >> /tmp/log", "echo", 11, "looks like a command"),
        ("0 9 * * * python3 job.py", "python3", 11, "looks like a command"),
        ("0 9 * * * -q job", "-q", 11, "looks like a command"),
        ("0 9 * * * [ -x /bin/job ] && /bin/job", "[", 11, "looks like a command"),
        ("*/5 * * * * * root job", "*", 13, "looks like a 6th time field"),
    ],
)
def test_trap_2_a_system_line_missing_its_user_warns_that_the_command_is_taken_as_user(
    line: str, user: str, column: int, reason: str
) -> None:
    crontab = read_crontab(line + "\n", system=True)
    (entry,) = crontab.entries
    assert entry.user == user
    (problem,) = crontab.problems
    assert problem.severity == "warning"
    assert problem.column == column
    assert problem.message.startswith(f"missing user field? {user!r} is taken as the user name")
    assert reason in problem.message


def test_trap_2_with_known_users_an_unknown_user_is_suspicious() -> None:
    text = "0 9 * * * backup /srv/backup.sh\n"
    assert "missing user field" not in " ".join(
        p.message for p in read_crontab(text, system=True).problems
    )
    problem = read_crontab(text, system=True, known_users=frozenset({"alice"})).problems[0]
    assert "missing user field? 'backup' is taken as the user name" in problem.message
    assert "not a known user" in problem.message
    known = read_crontab(text, system=True, known_users=frozenset({"backup"}))
    assert [p.severity for p in known.problems] == ["info"]


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("0 9 * * * www-data", "no command after the user name 'www-data'"),
        ("@daily root", "no command after the user name 'root'"),
        (
            "0 9 * * * /usr/local/bin/backup",
            "'/usr/local/bin/backup' looks like a command: is the user field missing?",
        ),
    ],
)
def test_trap_3_a_system_line_with_no_command_after_the_user_is_an_error(
    line: str, words: str
) -> None:
    crontab = read_crontab(line + "\n", system=True)
    assert crontab.entries == ()
    (problem,) = crontab.problems
    assert (problem.severity, problem.column) == ("error", len(line) + 1)
    assert words in problem.message


@pytest.mark.parametrize(
    ("line", "system", "words"),
    [
        ("0 9 * *", False, "incomplete line: 4 fields where 5 time fields"),
        ("0", True, "incomplete line: 1 field where 5 time fields"),
        ("0 9 * * *", False, "no command: a line needs 5 time fields"),
        ("0 9 * * *", True, "no user name and no command"),
        ("@daily", False, "no command: a line needs a @macro and a command"),
        ("@weekly", True, "no user name and no command: a line needs a @macro, a user name"),
        # One word short: a missing time field makes the command a day-of-week.
        ("0 9 * * /bin/backup", False, "is a field missing? A line needs 5 time fields"),
    ],
)
def test_trap_4_a_short_line_is_an_error_naming_what_is_missing(
    line: str, system: bool, words: str
) -> None:
    crontab = read_crontab(line + "\n", system=system)
    assert crontab.entries == ()
    (problem,) = crontab.problems
    assert problem.severity == "error"
    assert words in problem.message


@pytest.mark.parametrize(
    "command",
    [
        "source ~/.profile && ./job.sh",
        "cd /srv && . venv/bin/activate && ./job.py",
    ],
)
def test_trap_5_sourcing_a_profile_gets_a_note_about_the_explicit_environment(
    command: str,
) -> None:
    crontab = read_crontab(f"HOME=/home/me\n0 9 * * * {command}\n")
    (problem,) = crontab.problems
    assert (problem.line, problem.severity) == (2, "info")
    assert "explicit environment, not the login shell's" in problem.message
    assert len(crontab.entries) == 1


@pytest.mark.parametrize("command", ["~/bin/job", "$HOME/bin/job", "cd ${HOME}/x && make"])
def test_trap_5_home_without_home_set_gets_a_note_and_setting_home_silences_it(
    command: str,
) -> None:
    (problem,) = read_crontab(f"0 9 * * * {command}\n").problems
    assert problem.severity == "info"
    assert "~ or $HOME" in problem.message
    assert read_crontab(f"HOME=/home/me\n0 9 * * * {command}\n").problems == ()


@pytest.mark.parametrize(
    ("line", "column"),
    [
        ('0 0 * * * echo "100%" > /tmp/x', 20),
        ("0 0 * * * echo '50% off'", 19),
        ("0 0 * * * tar czf /b/$(date +%Y%m%d).tgz /home", 30),
        (r"0 0 * * * cp log log.$(date +\%Y-%m)", 34),
    ],
)
def test_a_percent_the_author_meant_literally_is_split_anyway_with_a_warning(
    line: str, column: int
) -> None:
    crontab = read_crontab(line + "\n")
    (entry,) = crontab.entries
    assert entry.stdin is not None
    (problem,) = crontab.problems
    assert (problem.severity, problem.column) == ("warning", column)
    assert line[column - 1] == "%"
    assert "ends the command" in problem.message
    assert r"\%" in problem.message


def test_a_percent_used_on_purpose_for_stdin_is_not_warned_about() -> None:
    assert read_crontab("0 0 * * * mail -s hi me%line one%line two\n").problems == ()


def test_a_sixth_time_field_in_a_user_table_is_imported_with_a_warning() -> None:
    crontab = read_crontab("0 0 9 * * 1-5 /bin/job\n")
    (entry,) = crontab.entries
    assert (entry.expr, entry.command) == ("0 0 9 * *", "1-5 /bin/job")
    (problem,) = crontab.problems
    assert problem.severity == "warning"
    assert "'1-5' looks like a 6th time field" in problem.message


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "column", "message"),
    [
        ("61 * * * * x", 1, "minute: 61 is out of range 0-59"),
        ("0 25 * * * x", 3, "hour: 25 is out of range 0-23"),
        ("  0 9 * * 1-9 x", 13, "day-of-week: 9 is out of range"),
        ("0\t9\t31\t4\t*\tx", 5, "never"),
        ("@fortnightly x", 1, "unknown macro @fortnightly"),
    ],
)
def test_a_bad_time_field_is_an_error_with_its_line_and_column(
    line: str, column: int, message: str
) -> None:
    crontab = read_crontab("# header\n\n" + line + "\n0 0 * * * fine\n")
    assert [e.line for e in crontab.entries] == [4]
    (problem,) = crontab.problems
    assert (problem.line, problem.column, problem.severity) == (3, column, "error")
    assert message in problem.message


def test_reboot_becomes_at_login_with_a_warning_that_says_so() -> None:
    crontab = read_crontab("@reboot /usr/bin/start-agent\n0 9 * * * echo hi\n")
    first, second = crontab.entries
    assert (first.at_login, first.command, second.at_login) == (True, "/usr/bin/start-agent", False)
    (problem,) = crontab.problems
    assert (problem.line, problem.column, problem.severity) == (1, 1, "warning")
    assert "imported as 'at login'" in problem.message


@pytest.mark.parametrize(
    "line",
    ["hello world", "this is not a crontab line at all", "=value", "\x0c", "0 9 * * * x\x00y"],
)
def test_an_odd_line_is_an_error_on_its_line(line: str) -> None:
    crontab = read_crontab(f"0 0 * * * ok\n{line}\n")
    assert [e.line for e in crontab.entries] == [1]
    (problem,) = crontab.problems
    assert (problem.line, problem.severity) == (2, "error")


def test_a_line_with_a_nul_says_so() -> None:
    (problem,) = read_crontab("0 9 * * * a\x00b\n").problems
    assert (problem.column, problem.message) == (12, "the line contains a NUL character")


def test_crlf_line_endings_read_exactly_like_lf() -> None:
    crlf = read_crontab(USER_CRONTAB.replace("\n", "\r\n"))
    assert crlf == read_crontab(USER_CRONTAB)
    assert not any("\r" in e.command or "\r" in (e.stdin or "") for e in crlf.entries)


def test_comments_and_blank_lines_are_ignored_wherever_they_start() -> None:
    crontab = read_crontab("   # indented comment\n\t\n#0 0 * * * disabled\n  \t \n")
    assert crontab == Crontab((), (), ())


# --- names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("/usr/local/bin/backup.sh --full", "backup.sh"),
        ("cd /srv/app && ./manage.py clearsessions", "manage.py"),
        ("python3 -m app.reports --daily", "app.reports"),
        ("/usr/bin/python3.12 /opt/etl/load.py", "load.py"),
        ("bash -c 'echo hi'", "bash"),
        ("FOO=1 BAR=2 nice -n 19 ionice -c3 rsync -a /a /b", "rsync"),
        ("flock -n /tmp/sync.lock timeout 5m /opt/sync/run", "run"),
        ("sleep 30; curl -fsS https://example.com/ping >/dev/null", "curl"),
        ("test -x /usr/bin/thing && /usr/bin/thing", "thing"),
        ("if [ -d /srv ]; then /srv/sweep; fi", "sweep"),
        ("echo 'unbalanced", "echo"),
        ("cd /tmp", "cd"),
    ],
)
def test_the_name_comes_from_what_the_command_runs_and_its_line(command: str, name: str) -> None:
    assert only_entry(f"\n0 0 * * * {command}\n").name == f"{name} (line 2)"


def test_a_name_is_at_most_60_characters() -> None:
    entry = only_entry("0 0 * * * /opt/" + "x" * 200 + ".sh\n")
    assert len(entry.name) == 60
    assert entry.name.endswith(" (line 1)")


# --- to_action ------------------------------------------------------------------------------


def test_to_action_runs_the_shell_line_with_stdin_and_the_job_environment() -> None:
    crontab = read_crontab(
        "SHELL=/bin/sh\nPATH=/usr/bin:/bin\nMAILTO=ops@example.com\nMAILFROM=cron@host\n"
        "CRON_TZ=Europe/Riga\nTZ=Europe/Riga\nLAB_TABLE=user\n"
        "* * * * * /usr/bin/python3 worker.py percent%first%second\n"
    )
    action = to_action(crontab.entries[0])
    assert action == CommandAction(
        shell="/usr/bin/python3 worker.py percent",
        stdin="first\nsecond\n",
        # MAILTO, MAILFROM and CRON_TZ configure cron, not the job; TZ is the job's, as in cron.
        env=(
            ("SHELL", "/bin/sh"),
            ("PATH", "/usr/bin:/bin"),
            ("TZ", "Europe/Riga"),
            ("LAB_TABLE", "user"),
        ),
    )
    assert action.argv == ()
    assert crontab.entries[0].tz == "Europe/Riga"


def test_to_action_of_a_plain_line_has_no_stdin_and_no_env() -> None:
    action = to_action(only_entry("@daily /usr/bin/true\n"))
    assert (action.shell, action.stdin, action.env, action.cwd) == ("/usr/bin/true", None, (), None)


# --- robustness -----------------------------------------------------------------------------


def check_accounted(text: str, crontab: Crontab) -> None:
    """Every non-blank, non-comment line is an entry, an assignment or has a problem; nothing
    else is reported; an error line is never imported and has that one problem only."""
    meaningful = set()
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.removesuffix("\r").strip(" \t")
        if stripped and not stripped.startswith("#"):
            meaningful.add(number)
    entry_lines = [entry.line for entry in crontab.entries]
    problem_lines = {problem.line for problem in crontab.problems}
    assigned = {line for line, _, _ in crontab.assignments}
    assert len(set(entry_lines)) == len(entry_lines)
    assert set(entry_lines) | problem_lines | assigned == meaningful
    for problem in crontab.problems:
        assert problem.severity in ("error", "warning", "info")
        assert problem.column is None or problem.column >= 1
        if problem.severity == "error":
            assert problem.line not in entry_lines
            assert problem.line not in assigned
            assert len(problems_on(crontab, problem.line)) == 1
    for entry in crontab.entries:
        assert entry.command.strip(" \t")
        assert "\0" not in entry.command
        assert 0 < len(entry.name) <= 60
        assert isinstance(to_action(entry), CommandAction)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300), system=st.booleans())
def test_arbitrary_text_never_raises_and_every_line_is_accounted_for(
    text: str, system: bool
) -> None:
    check_accounted(text, read_crontab(text, system=system))


_PIECES = [
    *("*", "0", "9", "*/5", "1-5", "mon-fri", "61", "@daily", "@reboot", "@nope", "root"),
    *("www-data", "echo", "/usr/bin/x", "-x", "%", "\\%", "\\", '"', "'", "=", "FOO=", "A=b"),
    *("MAILTO=x", "SHELL=/bin/bash", "CRON_TZ=UTC", "TZ=Nowhere", "HOME=/h", "~/x", "$HOME"),
    *("source", ".", "&&", ";", "|", ">", "#", "\r", "\t", " ", "\x00", "date", "+%Y", "é"),
]


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.lists(st.sampled_from(_PIECES), max_size=9).map(" ".join), max_size=8),
    system=st.booleans(),
    users=st.frozensets(st.sampled_from(["root", "alice", "echo", "*"]), max_size=2),
)
def test_crontab_like_text_never_raises_and_every_line_is_accounted_for(
    lines: list[str], system: bool, users: frozenset[str]
) -> None:
    text = "\n".join(lines)
    check_accounted(text, read_crontab(text, system=system, known_users=users))


def test_a_megabyte_of_binary_junk_or_of_one_line_is_read_without_raising() -> None:
    rng = random.Random(3)
    junk = bytes(rng.randrange(256) for _ in range(1 << 20)).decode("latin-1")
    for text in (junk, "0 0 * * * echo " + "x%" * (1 << 19), "0 " * (1 << 19)):
        check_accounted(text, read_crontab(text))


def test_a_megabyte_of_valid_lines_is_read_entry_by_entry() -> None:
    text = "0 9 * * 1-5 /usr/bin/job --flag\n" * 32_000
    crontab = read_crontab(text)
    assert len(crontab.entries) == 32_000
    assert crontab.problems == ()


# --- as real crontabs are written ---------------------------------------------------------------


def test_severities_are_an_enum_that_still_prints_as_before() -> None:
    problem = only_problem("61 * * * * true\n")
    assert problem.severity is Severity.ERROR
    assert f"{problem.severity}" == "error"


def test_a_last_line_without_a_newline_is_imported_with_a_warning_that_cron_ignores_it() -> None:
    crontab = read_crontab("0 1 * * * first\n0 2 * * * /usr/bin/last")
    assert [entry.command for entry in crontab.entries] == ["first", "/usr/bin/last"]
    [problem] = crontab.problems
    assert (problem.line, problem.column, problem.severity) == (2, 24, Severity.WARNING)
    assert "does not end with a newline: cron ignores such a line" in problem.message


@pytest.mark.parametrize("text", ["0 2 * * * last\n", "0 2 * * * last\n# the end", "x=1\n\n  "])
def test_a_text_ending_in_a_newline_a_comment_or_blanks_gets_no_newline_warning(text: str) -> None:
    assert not any("newline" in p.message for p in read_crontab(text).problems)


def test_a_bad_last_line_without_a_newline_is_one_error_not_also_a_warning() -> None:
    problem = only_problem("61 * * * * true")
    assert problem.severity is Severity.ERROR


@pytest.mark.parametrize(
    ("command", "column"),
    [("echo $(( 7 % 2 ))", 22), ('[ "$(( $(date +\\%s) / 60 % 2 ))" = 0 ] && run', 36)],
)
def test_a_percent_in_shell_arithmetic_is_a_warning(command: str, column: int) -> None:
    problem = only_problem(f"0 * * * * {command}\n")
    assert (problem.column, problem.severity) == (column, Severity.WARNING)
    assert "remainder of shell arithmetic $(( … ))" in problem.message


def test_an_escaped_percent_in_shell_arithmetic_is_fine() -> None:
    crontab = read_crontab("0 * * * * echo $(( 7 \\% 2 ))\n")
    assert crontab.problems == ()
    assert crontab.entries[0].command == "echo $(( 7 % 2 ))"


@pytest.mark.parametrize(
    ("line", "system", "column", "fix"),
    [
        ("0 9 * * 1 - 5 /usr/bin/report", False, 11, "write 1-5"),
        ("0 9 * * mon -fri /usr/bin/report", False, 13, "write mon-fri"),
        ("0 9 * * 1 - 5 root /usr/bin/report", True, 11, "write 1-5"),
    ],
)
def test_a_range_written_with_spaces_at_the_end_of_the_time_fields_is_a_warning(
    line: str, system: bool, column: int, fix: str
) -> None:
    problem = only_problem(line + "\n", system=system)
    assert (problem.column, problem.severity) == (column, Severity.WARNING)
    assert "a range written with spaces?" in problem.message and fix in problem.message


@pytest.mark.parametrize(
    ("line", "column", "fix"),
    [("0 2 - 5 * * report", 5, "2-5"), ("0 9 * * 1- 5 report", 11, "1-5")],
)
def test_a_range_written_with_spaces_inside_the_time_fields_says_how_to_write_it(
    line: str, column: int, fix: str
) -> None:
    problem = only_problem(line + "\n")
    assert (problem.column, problem.severity) == (column, Severity.ERROR)
    assert f"a range is written without spaces: {fix}" in problem.message


def test_commands_named_like_a_system_account_are_not_taken_for_a_system_line() -> None:
    users = frozenset({"mail", "sync", "alice"})
    text = (
        "0 * * * * mail -s hi bob < /tmp/x\n"
        "0 * * * * sync\n"
        "0 * * * * mail bob@example.com < /tmp/report\n"
        "0 * * * * sync && echo synced\n"
        "0 * * * * alice /home/alice/bin/x\n"
        "0 * * * * root /usr/bin/x\n"
    )
    crontab = read_crontab(text, known_users=users)
    assert len(crontab.entries) == 6
    assert [(p.line, p.severity) for p in crontab.problems] == [
        (5, Severity.WARNING),
        (6, Severity.WARNING),
    ]
    assert all("looks like a system-crontab line" in p.message for p in crontab.problems)


def test_a_file_that_only_sets_mailto_has_no_error() -> None:
    crontab = read_crontab("MAILTO=alice@example.com\n")
    assert crontab.entries == ()
    assert [p.severity for p in crontab.problems] == [Severity.WARNING]

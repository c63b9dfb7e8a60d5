"""The editor's Action box: a command (line, shell, folder, environment, secrets, input) or an HTTP
request (method, URL, headers, secret headers, body, timeout), as the service's action JSON."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import fields
from functools import partial
from urllib.parse import urlsplit

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from domi_desktop.frontdoor.wire import Json
from domi_desktop.model import HttpAction
from domi_desktop.ports import SecretStore
from domi_desktop.ui.editor.secret import NewSecretDialog
from domi_desktop.ui.editor.widgets import (
    PairsTable,
    error_label,
    help_label,
    row,
    stacked,
    text_box,
    variable_name,
)
from domi_desktop.ui.i18n import Texts, register, tr

HTTP_TIMEOUT: float = next(f.default for f in fields(HttpAction) if f.name == "timeout")  # type: ignore[assignment]
"""An HTTP job's request timeout when its Policies timeout is "the default"."""
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")
SECRET_TIP = "Only the secret's name is kept here; its value is read from the keychain at run time."
NO_SECRETS_CLI = "No secrets stored yet. Add one with: domi-desktop secret set NAME"
NO_SECRETS = "No secrets stored yet: create one with “New secret…”."


class ActionBox(QGroupBox):
    """What a schedule runs; ``changed`` on every edit."""

    changed = Signal()

    def __init__(
        self,
        texts: Texts,
        secret_names: Callable[[], list[str]],
        secrets: SecretStore | None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._texts = texts
        self._secret_names = secret_names
        self._secrets = secrets
        texts.bind(self.setTitle, "Action")
        self.kind_command = QRadioButton()
        texts.bind(self.kind_command.setText, "Run a command")
        self.kind_command.setObjectName("kindCommand")
        self.kind_command.setChecked(True)
        self.kind_http = QRadioButton()
        texts.bind(self.kind_http.setText, "Send an HTTP request")
        self.kind_http.setObjectName("kindHttp")
        kinds = QButtonGroup(self)
        kinds.addButton(self.kind_command)
        kinds.addButton(self.kind_http)
        self._hints: list[QLabel] = []
        self.pages = QStackedWidget()
        self.pages.addWidget(self._build_command_page())
        self.pages.addWidget(self._build_http_page())
        self.error = error_label("actionError")

        layout = QVBoxLayout(self)
        choice = QHBoxLayout()
        choice.addWidget(self.kind_command)
        choice.addWidget(self.kind_http)
        choice.addStretch(1)
        layout.addLayout(choice)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.error)
        self._show_hints()
        self._connect()

    # -- building ------------------------------------------------------------------------------

    def _secrets_row(self, table: PairsTable) -> QWidget:
        hint = help_label()
        self._hints.append(hint)
        widgets: list[QWidget] = [table, hint]
        if self._secrets is not None:
            create = QPushButton()
            create.setObjectName("newSecret")
            self._texts.bind(create.setText, "New secret…")
            self._texts.bind(create.setToolTip, "Store a new secret in the keychain")
            create.clicked.connect(partial(self.new_secret, table))
            widgets.append(row(create, QWidget(), stretch=1))
        return stacked(*widgets)

    def _build_command_page(self) -> QWidget:
        t = self._texts
        self.command = QLineEdit()
        self.command.setObjectName("command")
        t.bind(self.command.setAccessibleName, "Command")
        t.bind(self.command.setPlaceholderText, "e.g. python3 report.py --endpoint login")
        self.shell = QCheckBox()
        t.bind(self.shell.setText, "Run in a shell (pipes, redirections, $VARIABLES)")
        self.shell.setObjectName("shell")
        t.bind(
            self.shell.setToolTip,
            "Without a shell the line is split into arguments like a shell would, but run directly.",
        )
        self.cwd = QLineEdit()
        self.cwd.setObjectName("cwd")
        t.bind(self.cwd.setAccessibleName, "Working folder")
        t.bind(self.cwd.setPlaceholderText, "Home folder")
        browse = QToolButton()
        browse.setText("…")
        t.bind(browse.setToolTip, "Choose a folder")
        t.bind(browse.setAccessibleName, "Choose a folder")
        browse.clicked.connect(self._browse_cwd)
        self.env = PairsTable(t, "Variable", "Value")
        self.env.setObjectName("env")
        t.bind(
            self.env.setToolTip,
            "Jobs get a small, explicit environment, not your shell's: set what they need.",
        )
        self.secret_env = PairsTable(
            t, "Variable", "Secret", choices=self._secret_names, propose=variable_name
        )
        self.secret_env.setObjectName("secretEnv")
        t.bind(self.secret_env.setToolTip, SECRET_TIP)
        self.stdin = text_box("stdin", 2)
        t.bind(self.stdin.setAccessibleName, "Standard input")
        t.bind(self.stdin.setPlaceholderText, "Optional text for the command's standard input")

        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 4, 0, 0)
        form.addRow(t.label("Command"), self.command)
        form.addRow("", self.shell)
        form.addRow(t.label("Working folder"), row(self.cwd, browse))
        form.addRow(t.label("Environment"), self.env)
        form.addRow(t.label("Secrets"), self._secrets_row(self.secret_env))
        form.addRow(t.label("Input"), self.stdin)
        return page

    def _build_http_page(self) -> QWidget:
        t = self._texts
        self.http_method = QComboBox()
        self.http_method.setObjectName("httpMethod")
        t.bind(self.http_method.setAccessibleName, "Method")
        self.http_method.addItems(HTTP_METHODS)
        self.http_url = QLineEdit()
        self.http_url.setObjectName("httpUrl")
        t.bind(self.http_url.setAccessibleName, "URL")
        self.http_url.setPlaceholderText("https://example.org/report")
        self.http_headers = PairsTable(t, "Header", "Value")
        self.http_headers.setObjectName("httpHeaders")
        self.secret_headers = PairsTable(t, "Header", "Secret", choices=self._secret_names)
        self.secret_headers.setObjectName("secretHeaders")
        t.bind(self.secret_headers.setToolTip, SECRET_TIP)
        self.http_body = text_box("httpBody", 2)
        t.bind(self.http_body.setAccessibleName, "Body")
        t.bind(self.http_body.setPlaceholderText, "Optional request body")
        self.loaded_timeout: float | None = None
        """The request's timeout as loaded; the editor shows one timeout, the Policies box's."""

        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 4, 0, 0)
        form.addRow(t.label("Request"), row(self.http_method, self.http_url, stretch=1))
        form.addRow(t.label("Headers"), self.http_headers)
        form.addRow(t.label("Secret headers"), self._secrets_row(self.secret_headers))
        form.addRow(t.label("Body"), self.http_body)
        return page

    def _connect(self) -> None:
        for kind in (self.kind_command, self.kind_http):
            kind.toggled.connect(self._kind_changed)
        for line in (self.command, self.cwd, self.http_url):
            line.textChanged.connect(self.changed)
        for text in (self.stdin, self.http_body):
            text.textChanged.connect(self.changed)
        for table in (self.env, self.secret_env, self.http_headers, self.secret_headers):
            table.changed.connect(self.changed)
        self.shell.toggled.connect(self.changed)
        self.http_method.currentIndexChanged.connect(self.changed)

    def is_http(self) -> bool:
        return self.kind_http.isChecked()

    def _kind_changed(self) -> None:
        self.pages.setCurrentIndex(1 if self.kind_http.isChecked() else 0)
        self.changed.emit()

    def _show_hints(self) -> None:
        empty = NO_SECRETS_CLI if self._secrets is None else NO_SECRETS
        text = "" if self._secret_names() else tr(empty)
        for hint in self._hints:
            hint.setText(text)
            hint.setVisible(bool(text))

    def retranslate(self) -> None:
        self._show_hints()

    # -- secrets -------------------------------------------------------------------------------

    def new_secret(self, table: PairsTable) -> NewSecretDialog | None:
        """Ask for a new secret; once stored, a row of ``table`` refers to it by name."""
        if self._secrets is None:
            return None
        dialog = NewSecretDialog(self._secrets, self)
        dialog.accepted.connect(lambda: self._secret_created(table, dialog.created))
        dialog.open()
        return dialog

    def _secret_created(self, table: PairsTable, name: str | None) -> None:
        if name is None:
            return
        table.refresh_choices()
        table.add_for(name)
        self._show_hints()

    # -- the action ----------------------------------------------------------------------------

    def _browse_cwd(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, tr("Working folder"), self.cwd.text())
        if folder:
            self.cwd.setText(folder)

    def load(self, action: Json) -> None:
        if action["kind"] == "http":
            self.kind_http.setChecked(True)
            if self.http_method.findText(action["method"]) < 0:
                self.http_method.addItem(action["method"])
            self.http_method.setCurrentText(action["method"])
            self.http_url.setText(action["url"])
            self.http_headers.set_pairs(action["headers"])
            self.secret_headers.set_pairs(action["secret_headers"])
            self.http_body.setPlainText(action["body"] or "")
            self.loaded_timeout = float(action["timeout"])
        else:
            shell = action["shell"]
            self.shell.setChecked(shell is not None)
            self.command.setText(shlex.join(action["argv"]) if shell is None else shell)
            self.cwd.setText(action["cwd"] or "")
            self.env.set_pairs(action["env"])
            self.secret_env.set_pairs(action["secret_env"])
            self.stdin.setPlainText(action["stdin"] or "")

    def action_json(self) -> tuple[Json, str | None]:
        """The action as the service takes it, and the first problem the user can fix here."""
        problem: str | None = None
        if self.kind_http.isChecked():
            url = self.http_url.text().strip()
            parts = urlsplit(url)
            if not url:
                problem = tr("Enter the URL to request.")
            elif parts.scheme not in ("http", "https") or not parts.hostname:
                problem = tr("The URL must start with http:// or https:// and name a host.")
            tables = (self.http_headers, self.secret_headers)
            action: Json = {
                "kind": "http",
                "method": self.http_method.currentText(),
                "url": url,
                "headers": dict(self.http_headers.pairs()),
                "secret_headers": dict(self.secret_headers.pairs()),
                "body": self.http_body.toPlainText() or None,
                "timeout": HTTP_TIMEOUT,  # the editor's own: the Policies box's timeout
            }
        else:
            line = self.command.text().strip()
            shell = self.shell.isChecked()
            argv: list[str] = []
            if not line:
                problem = tr("Enter the command to run.")
            elif not shell:
                try:
                    argv = shlex.split(line)
                except ValueError:
                    problem = tr("The command has an unclosed quote.")
            tables = (self.env, self.secret_env)
            action = {
                "kind": "command",
                "argv": argv,
                "shell": line if shell else None,
                "cwd": self.cwd.text().strip() or None,
                "env": dict(self.env.pairs()),
                "secret_env": dict(self.secret_env.pairs()),
                "stdin": self.stdin.toPlainText() or None,
            }
        for table in tables:
            problem = problem or table.problem()
        return action, problem


register(
    "zh",
    {
        "Action": "操作",
        "Run a command": "运行命令",
        "Send an HTTP request": "发送 HTTP 请求",
        "New secret…": "新建密钥…",
        "Store a new secret in the keychain": "在钥匙串中保存一个新密钥",
        NO_SECRETS_CLI: "还没有保存任何密钥。可用以下命令添加：domi-desktop secret set 名称",
        NO_SECRETS: "还没有保存任何密钥：点击“新建密钥…”创建。",
        "Command": "命令",
        "e.g. python3 report.py --endpoint login": "例如：python3 report.py --endpoint login",
        "Run in a shell (pipes, redirections, $VARIABLES)": "在 shell 中运行（管道、重定向、$变量）",
        "Without a shell the line is split into arguments like a shell would, but run directly.": (
            "不使用 shell 时，这一行会像 shell 那样拆分为参数，但直接运行。"
        ),
        "Working folder": "工作目录",
        "Home folder": "主目录",
        "Choose a folder": "选择文件夹",
        "Variable": "变量",
        "Value": "值",
        "Secret": "密钥",
        "Jobs get a small, explicit environment, not your shell's: set what they need.": (
            "任务只获得一个精简、明确的环境，而不是你的 shell 环境：请设置它需要的变量。"
        ),
        "Standard input": "标准输入",
        "Optional text for the command's standard input": "可选：作为命令标准输入的文本",
        "Environment": "环境变量",
        "Secrets": "密钥",
        SECRET_TIP: "这里只保存密钥的名称；其值在运行时从钥匙串读取。",
        "Input": "输入",
        "Method": "方法",
        "URL": "URL",
        "Header": "请求头",
        "Body": "请求体",
        "Optional request body": "可选的请求体",
        "Request": "请求",
        "Headers": "请求头",
        "Secret headers": "密钥请求头",
        "Timeout": "超时",
        " s": " 秒",
        "Enter the URL to request.": "请输入要请求的 URL。",
        "The URL must start with http:// or https:// and name a host.": (
            "URL 必须以 http:// 或 https:// 开头，并包含主机名。"
        ),
        "Enter the command to run.": "请输入要运行的命令。",
        "The command has an unclosed quote.": "命令中有未闭合的引号。",
    },
)

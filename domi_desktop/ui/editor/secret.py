"""Creating a secret from the editor: its value goes straight into the keychain (the
``SecretStore``) and is never shown again; the schedule keeps only the name."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from domi_desktop.errors import DomiError
from domi_desktop.ports import SecretStore
from domi_desktop.ui.editor.widgets import error_label
from domi_desktop.ui.i18n import register, tr

register(
    "zh",
    {
        "New secret": "新建密钥",
        "Secret name": "密钥名称",
        "e.g. API_TOKEN": "例如：API_TOKEN",
        "Secret value": "密钥值",
        "Store in the keychain": "存入钥匙串",
        "The value goes into the system keychain; it is not shown again, and schedules keep only "
        "the name.": "密钥值存入系统钥匙串，之后不再显示；计划中只保存名称。",
        "A secret named “{name}” already exists; pick another name.": (
            "名为“{name}”的密钥已存在；请换一个名称。"
        ),
        "Could not store the secret: {error}": "无法保存密钥：{error}",
    },
)


class NewSecretDialog(QDialog):
    """Name and value of a new secret; on accept, ``created`` is the stored name."""

    def __init__(self, secrets: SecretStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("newSecretDialog")
        self.setWindowTitle(tr("New secret"))
        self._secrets = secrets
        self.created: str | None = None
        self.name = QLineEdit()
        self.name.setObjectName("secretName")
        self.name.setAccessibleName(tr("Secret name"))
        self.name.setPlaceholderText(tr("e.g. API_TOKEN"))
        self.value = QLineEdit()
        self.value.setObjectName("secretValue")
        self.value.setAccessibleName(tr("Secret value"))
        # Typed blind, like a password: someone may be watching the screen.
        self.value.setEchoMode(QLineEdit.EchoMode.Password)
        note = QLabel(
            tr(
                "The value goes into the system keychain; it is not shown again, and schedules "
                "keep only the name."
            )
        )
        note.setWordWrap(True)
        self.error = error_label("secretError")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.store_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.store_button.setObjectName("storeSecret")
        self.store_button.setText(tr("Store in the keychain"))
        buttons.accepted.connect(self._store)
        buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow(tr("Secret name"), self.name)
        form.addRow(tr("Secret value"), self.value)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.name.setFocus()

    def _store(self) -> None:
        name = self.name.text().strip()
        try:
            if name in self._secrets.names():
                self._show_error(
                    tr("A secret named “{name}” already exists; pick another name.", name=name)
                )
                return
            self._secrets.set(name, self.value.text())
        except DomiError as error:
            self._show_error(tr("Could not store the secret: {error}", error=str(error)))
            return
        self.value.clear()  # stored: nothing in this process shows or holds it any more
        self.created = name
        self.accept()

    def _show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

"""The Schedules window's words: its actions' texts (set again on a language change) and their
Chinese."""

from __future__ import annotations

from domi_desktop.ui.i18n import register

NO_TRAY = (
    "There is no tray on this desktop (yet): closing this window stops the scheduler. "
    "When a panel with a tray starts, the icon moves there."
)

register(
    "zh",
    {
        "Schedules": "计划",
        "&File": "文件(&F)",
        "&Schedule": "计划(&S)",
        "New…": "新建…",
        "Edit…": "编辑…",
        "Duplicate": "复制",
        "Delete…": "删除…",
        "Run now": "立即运行",
        "Stop": "停止",
        "Pause": "暂停",
        "Resume": "恢复",
        "History…": "历史…",
        "Timeline…": "时间线…",
        "Pause all": "全部暂停",
        "Import…": "导入…",
        "Export…": "导出…",
        "Open data folder": "打开数据文件夹",
        "Settings…": "设置…",
        "Quit": "退出",
        "Search schedules": "搜索计划",
        "Delete schedule": "删除计划",
        "Delete “{name}”? Its history is deleted too.": "删除“{name}”？其历史也将一并删除。",
        "Delete {count} schedules? Their history is deleted too.": (
            "删除 {count} 个计划？其历史也将一并删除。"
        ),
        "Started {name} (run {run_id}).": "已开始 {name}（运行 {run_id}）。",
        "Stopping {name}.": "正在停止 {name}。",
        "{name} is not running.": "{name} 没有在运行。",
        "Cannot do that: {reason}": "无法完成：{reason}",
        "Import a crontab…": "导入 crontab…",
        NO_TRAY: "此桌面（暂时）没有托盘：关闭此窗口会停止调度。带托盘的面板启动后，图标会移到那里。",
        "No schedules yet: {new} or {crontab}": "还没有计划：{new}或{crontab}",
        "{shown} of {total} schedules": "{shown} / {total} 个计划",
    },
)

ACTION_TEXTS = {
    "new": "New…",
    "edit": "Edit…",
    "duplicate": "Duplicate",
    "delete": "Delete…",
    "run": "Run now",
    "stop": "Stop",
    "skip": "Skip next",
    "snooze": "Snooze 1 hour",
    "toggle": "Pause",
    "history": "History…",
    "timeline": "Timeline…",
    "pause_all": "Pause all",
    "import": "Import…",
    "crontab": "Import a crontab…",
    "export": "Export…",
    "data": "Open data folder",
    "settings": "Settings…",
    "quit": "Quit",
}
"""Each action of the window by key, in English (the catalog's keys)."""

"""The composition root: Qt loop, headless daemon, tray app. Only this package knows everything."""

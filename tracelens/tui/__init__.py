"""The terminal UI: browse incidents and rules, diagnose a new log, act on it."""

from tracelens.tui.app import TracelensApp, make_app

__all__ = ["TracelensApp", "make_app"]

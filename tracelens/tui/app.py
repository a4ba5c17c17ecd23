"""The tracelens terminal app and its factory.

``make_app`` builds the app from what it needs (a store path, rules, an optional log already
diagnosed), so tests build it from corpus logs and a temporary store.
"""

from __future__ import annotations

import os
from pathlib import Path

from textual.app import App
from textual.binding import Binding

from tracelens.models import Report
from tracelens.paths import data_home


def clipboard_file() -> Path:
    """Where the last text copied in the app is also written
    (``$XDG_DATA_HOME/tracelens/clipboard.txt``)."""
    return data_home() / "tracelens" / "clipboard.txt"


class TracelensApp(App):
    """Incidents, rules and diagnoses in the terminal."""

    CSS_PATH = "app.tcss"
    TITLE = "tracelens"
    BINDINGS = [
        Binding("question_mark", "help", "Help", tooltip="this help"),
        Binding(
            "ctrl+t",
            "toggle_theme",
            "Theme",
            show=False,
            tooltip="light/dark theme (ctrl+p lists them all); remembered",
        ),
        Binding("q", "quit", "Quit", tooltip="quit"),
    ]

    def __init__(
        self,
        *,
        db_path: Path | None = None,
        rules=None,
        report: Report | None = None,
        settings_path: Path | None = None,
    ):
        super().__init__()
        self.db_path = db_path
        self._rules = rules
        self.initial_report = report
        self.settings_path = settings_path
        """Where the theme is remembered; ``None``: nothing is read or written."""
        self.settings: dict = {}

    # services shared by the screens -----------------------------------------------------------

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity="information",
        timeout=None,
        markup: bool = False,
    ) -> None:
        """A toast, always plain text: toasts quote log text (a model path, a command, a file
        name), and log text is never markup (``[/]`` would crash the app, ``[@click=...]``
        would become an action). Screens' ``notify`` comes here too."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    @property
    def rules(self):
        if self._rules is None:
            from tracelens.rulebook.load import default_rules

            self._rules = default_rules()
        return self._rules

    def store(self, create: bool = True):
        """The incident store, or ``None`` (with a notification) when it cannot be opened."""
        from tracelens.incidents.store import Store, StoreError

        try:
            return Store(self.db_path, create=create)
        except StoreError as exc:
            self.notify(str(exc), severity="error")
            return None

    def copy(self, text: str, what: str) -> None:
        """Send ``text`` to the clipboard and say so honestly: the terminal gets it through an
        OSC 52 escape, which many terminals (and tmux by default) drop without a word, so
        whether it arrived cannot be known here. The text is also written to
        :func:`clipboard_file`, whose path the message gives, for a terminal that dropped it."""
        self.copy_to_clipboard(text)
        hint = "; in tmux: set -g set-clipboard on" if os.environ.get("TMUX") else ""
        path = clipboard_file()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
            saved = f"; also in {path}"
        except OSError as exc:
            saved = f"; could not also write {path}: {exc.strerror or exc}"
        self.notify(
            f"{what}: sent to the terminal's clipboard (OSC 52; some terminals ignore it{hint}){saved}"
        )

    def diagnose_bytes(self, data: bytes, source: str) -> Report:
        from tracelens.engine import parse, report
        from tracelens.incidents.similar import attach_similar
        from tracelens.incidents.store import StoreError

        rep = report(parse(data, source), self.rules)
        try:
            attach_similar(rep, self.db_path, limit=5)
        except StoreError as exc:
            self.notify(str(exc), severity="error")
        return rep

    # screens ------------------------------------------------------------------------------------

    def on_mount(self) -> None:
        from tracelens.tui.screens.incidents import IncidentsScreen

        self._restore_settings()
        self.push_screen(IncidentsScreen())
        if self.initial_report is not None:
            self.open_report(self.initial_report)

    def open_report(self, rep: Report) -> None:
        from tracelens.tui.screens.diagnosis import DiagnosisScreen
        from tracelens.tui.view import from_report

        self.push_screen(DiagnosisScreen(from_report(rep)))

    def open_incident(self, incident_id: int) -> None:
        from tracelens.incidents.store import StoreError
        from tracelens.tui.screens.diagnosis import DiagnosisScreen
        from tracelens.tui.view import from_incident

        store = self.store(create=False)
        if store is None:
            return
        try:
            view = from_incident(store, incident_id)
        except StoreError as exc:
            self.notify(str(exc), severity="error")
            return
        finally:
            store.close()
        self.push_screen(DiagnosisScreen(view))

    def action_help(self) -> None:
        from tracelens.tui.screens.diagnosis import DiagnosisScreen
        from tracelens.tui.screens.dialogs import HelpScreen
        from tracelens.tui.screens.incidents import IncidentsScreen
        from tracelens.tui.screens.logview import LogReader
        from tracelens.tui.screens.rules import RulesScreen

        owners: list[tuple[str, object]] = [
            ("Everywhere", type(self)),
            ("Incident list", IncidentsScreen),
            ("Diagnosis", DiagnosisScreen),
            ("Log (tab 2)", LogReader),
            ("Rules", RulesScreen),
            ("Dialogs", None),
        ]
        self.push_screen(HelpScreen(owners))

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    # settings -----------------------------------------------------------------------------------

    def _restore_settings(self) -> None:
        """The theme of the last run (a theme since removed, or a broken file, is ignored); from
        then on, a theme chosen by ctrl+t or the command palette is written back."""
        from tracelens.tui.settings import load_settings

        if self.settings_path is None:
            return
        self.settings, problem = load_settings(self.settings_path)
        if problem:
            self.notify(problem, severity="warning")
        if self.settings.get("theme") in self.available_themes:
            self.theme = self.settings["theme"]
        self.theme_changed_signal.subscribe(self, self._remember_theme)

    def _remember_theme(self, theme) -> None:
        from tracelens.tui.settings import save_settings

        if self.settings_path is None or self.settings.get("theme") == theme.name:
            return
        self.settings["theme"] = theme.name
        try:
            save_settings(self.settings_path, self.settings)
        except OSError as exc:
            self.notify(
                f"theme not remembered: {self.settings_path}: {exc.strerror or exc}",
                severity="warning",
            )


def make_app(
    *,
    db_path: Path | str | None = None,
    rules=None,
    report: Report | None = None,
    settings_path: Path | str | None = None,
) -> TracelensApp:
    """Build the app (tests use this with a temporary store and corpus logs). The theme is
    remembered in ``settings_path``, by default ``$XDG_CONFIG_HOME/tracelens/tui.json``."""
    from tracelens.incidents.store import default_path
    from tracelens.tui.settings import default_settings_path

    return TracelensApp(
        db_path=Path(db_path) if db_path else default_path(),
        rules=rules,
        report=report,
        settings_path=Path(settings_path) if settings_path else default_settings_path(),
    )

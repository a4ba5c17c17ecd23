"""The tracelens terminal app and its factory.

``make_app`` builds the app from what it needs (a store path, rules, an optional log already
diagnosed), so tests build it from corpus logs and a temporary store.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.binding import Binding

from tracelens.models import Report


class TracelensApp(App):
    """Incidents, rules and diagnoses in the terminal."""

    CSS_PATH = "app.tcss"
    TITLE = "tracelens"
    BINDINGS = [
        Binding("question_mark", "help", "Help"),
        Binding("ctrl+t", "toggle_theme", "Theme"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, *, db_path: Path | None = None, rules=None, report: Report | None = None):
        super().__init__()
        self.db_path = db_path
        self._rules = rules
        self.initial_report = report

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
        from tracelens.tui.screens.dialogs import HelpScreen

        self.push_screen(HelpScreen())

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"


def make_app(
    *, db_path: Path | str | None = None, rules=None, report: Report | None = None
) -> TracelensApp:
    """Build the app (tests use this with a temporary store and corpus logs)."""
    from tracelens.incidents.store import default_path

    return TracelensApp(
        db_path=Path(db_path) if db_path else default_path(), rules=rules, report=report
    )

"""Modal dialogs: help, a new log, resolve, attach a ticket, export a ticket."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from tracelens.tui.app import TracelensApp

from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, TextArea


class _Dialog(ModalScreen):
    @property
    def tl(self) -> TracelensApp:
        """The app, with its own attributes known to type checkers."""
        return cast("TracelensApp", self.app)

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def action_cancel(self) -> None:
        self.dismiss(None)


class _Form(_Dialog):
    """A dialog whose Enter (in a text box) or first button confirms: subclasses give ``_ok``."""

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._ok()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in ("ok", "go"):
            self._ok()
        else:
            self.dismiss(None)

    def _ok(self) -> None:  # pragma: no cover - every form overrides it
        raise NotImplementedError


class HelpScreen(_Dialog):
    """Every key, by screen: made from the screens' bindings (see :mod:`tracelens.tui.keys`)."""

    def __init__(self, owners: list[tuple[str, object]]) -> None:
        super().__init__()
        self.owners = owners
        """(section title, the app or screen class whose bindings it lists) in order."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="help"):
            yield Label(Text("Keys", style="bold"))
            with VerticalScroll(id="help-keys"):
                yield Static(self.table())
            yield Button("Close", id="close")

    def on_mount(self) -> None:
        self.query_one("#help-keys").focus()  # Up/Down/PgDn scroll the keys at 80x24

    def table(self) -> Table:
        from tracelens.tui.keys import help_sections

        owners = self.owners
        table = Table(show_header=False, box=None, expand=True, padding=(0, 1))
        table.add_column("key", no_wrap=True, style="bold", min_width=9)
        table.add_column("what", ratio=1)
        for k, (title, rows) in enumerate(help_sections(owners, self.app.get_key_display)):
            table.add_row(Text(title, style="bold underline"), "", end_section=False)
            for key, what in rows:
                table.add_row(Text(key), Text(what))
            if k < len(owners) - 1:
                table.add_row("", "")
        return table

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)


class NewLogScreen(_Form):
    """Open a log by path, or paste its text; diagnose it."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text("Diagnose a log: a path, or paste the text below", style="bold"))
            yield Input(placeholder="/path/to/crash.log", id="path")
            yield TextArea(id="paste")
            with Horizontal(classes="buttons"):
                yield Button("Diagnose", id="go", variant="primary")
                yield Button("Cancel", id="cancel")

    def _ok(self) -> None:
        path = self.query_one("#path", Input).value.strip()
        pasted = self.query_one("#paste", TextArea).text
        if path:
            p = Path(path).expanduser()
            if not p.is_file():
                self.notify(f"{path}: no such file", severity="error")
                return
            try:
                data, source = p.read_bytes(), str(p)
            except OSError as exc:
                self.notify(f"{path}: {exc.strerror or exc}", severity="error")
                return
        elif pasted.strip():
            data, source = pasted.encode("utf-8", "surrogatepass"), "<pasted>"
        else:
            self.notify("give a path or paste a log", severity="warning")
            return
        rep = self.tl.diagnose_bytes(data, source)
        self.dismiss(None)
        self.tl.open_report(rep)


class ResolveScreen(_Form):
    """Which remedy worked, and a note."""

    def __init__(self, remedies: list[str]) -> None:
        super().__init__()
        self.remedies = remedies

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text("Mark resolved", style="bold"))
            yield Select(
                [(Text(f"{k}. {r}"[:70]), r) for k, r in enumerate(self.remedies, 1)],
                prompt="remedy that worked",
                id="remedy",
            )
            yield Input(placeholder="note: what was done", id="note")
            with Horizontal(classes="buttons"):
                yield Button("Resolve", id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def _ok(self) -> None:
        value = self.query_one("#remedy", Select).value
        remedy = None if value is Select.NULL else value
        self.dismiss((remedy, self.query_one("#note", Input).value.strip() or None))


class AttachScreen(_Form):
    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text("Attach a ticket (URL or key such as OPS-1234)", style="bold"))
            yield Input(placeholder="https://… or OPS-1234", id="ref")
            with Horizontal(classes="buttons"):
                yield Button("Attach", id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def _ok(self) -> None:
        ref = self.query_one("#ref", Input).value.strip()
        if not ref:
            self.notify("give a URL or a key", severity="warning")
            return
        self.dismiss(ref)


class ExportScreen(_Form):
    """Write a ticket body to a file the dialog names in full (a folder is shown, and can be
    changed) and send it to the clipboard (OSC 52, which a terminal may ignore)."""

    EXT = {"markdown": "md", "jira": "txt", "json": "json"}

    def __init__(self, view, folder: Path | None = None) -> None:
        super().__init__()
        self.view = view
        self.text = ""
        self.folder = (folder or Path.cwd()).resolve()
        """Where the ticket goes unless the user says otherwise (the current directory)."""
        self.confirm_replace: Path | None = None
        """A file that exists: the next Enter on the same path replaces it."""

    def default_name(self, fmt: str = "markdown") -> str:
        inc = self.view.incident
        stem = f"tracelens-incident-{inc.id}" if inc is not None else "tracelens-ticket"
        return f"{stem}.{self.EXT[fmt]}"

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text("Export a ticket", style="bold"))
            yield Select(
                [("Markdown", "markdown"), ("Jira", "jira"), ("JSON", "json")],
                value="markdown",
                allow_blank=False,
                id="format",
            )
            yield Label(Text("Write to (a file, or a folder for the name shown):"))
            yield Input(value=str(self.folder / self.default_name()), id="path")
            with Horizontal(classes="buttons"):
                yield Button("Write and copy", id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#path", Input).focus()  # enter writes where it says

    def on_select_changed(self, event: Select.Changed) -> None:
        inp = self.query_one("#path", Input)
        inp.value = str(Path(inp.value).with_suffix("." + self.EXT[str(event.value)]))

    def target(self) -> Path | str:
        """The file to write (absolute), or one line saying why there is none."""
        fmt = str(self.query_one("#format", Select).value)
        given = self.query_one("#path", Input).value.strip()
        path = Path(given).expanduser() if given else self.folder
        if not path.is_absolute():
            path = self.folder / path
        if path.is_dir():
            path = path / self.default_name(fmt)
        if not path.parent.is_dir():
            return f"{path.parent}: no such folder"
        return path.resolve()

    def _ok(self) -> None:
        from tracelens.incidents.incident import live_ticket, stored_ticket
        from tracelens.incidents.records import Excerpt
        from tracelens.incidents.redact import Redactor
        from tracelens.incidents.ticket import render_ticket

        v = self.view
        if v.live is not None:
            made = live_ticket(v.live, Redactor())
            if v.incident is not None:  # saved from this screen
                made.incident = stored_ticket(None, Excerpt(), v.incident, Redactor()).incident
        else:
            assert v.incident is not None  # a view is live or of a stored incident
            made = stored_ticket(v.report, v.excerpt or Excerpt(), v.incident, Redactor())
        fmt = str(self.query_one("#format", Select).value)
        self.text = render_ticket(fmt, made.report, made.excerpt, made.incident)
        path = self.target()
        if isinstance(path, str):
            self.notify(path, severity="error")
            return
        if path.exists() and self.confirm_replace != path:
            self.confirm_replace = path
            self.notify(f"{path} exists: press enter again to replace it", severity="warning")
            return
        try:
            path.write_text(self.text, encoding="utf-8")
        except OSError as exc:
            self.notify(f"{path}: {exc.strerror or exc}", severity="error")
            return
        self.notify(f"ticket written to {path}")
        self.tl.copy(self.text, "the ticket")
        self.dismiss(str(path))

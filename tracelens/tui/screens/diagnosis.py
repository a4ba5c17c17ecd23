"""A diagnosis (of a new log or a stored incident): causes, remedies, evidence in the log, the
traceback, facts and similar incidents, with the actions an on-call engineer needs."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from tracelens.tui.app import TracelensApp

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import (
    DataTable,
    Header,
    Label,
    Static,
    TabbedContent,
    TabPane,
)

from tracelens.models import Record
from tracelens.tui.footer import KeyFooter
from tracelens.tui.loglines import LogLine, build_lines, whole_records
from tracelens.tui.remedies import RemedyList
from tracelens.tui.screens.logview import LogReader
from tracelens.tui.screens.tracebacks import TracebackTree
from tracelens.tui.view import DiagnosisView


def reader_for(view: DiagnosisView) -> LogReader:
    """The log tab of a diagnosis: the whole log (a live log's records, or the parsed log
    kept with a stored incident), else the stored excerpt; opened at the originating failure.
    A live log parsed only around its trouble is read whole in the background."""
    doc = view.report.document
    evidence = view.evidence_lines
    more = None
    if doc.records:
        lines = build_lines(doc.records, evidence, doc.tracebacks, doc.errors, doc.line_count)
        note = "" if doc.full_parse else "a large log: the parts around its trouble"
        if not doc.full_parse and view.live is not None:

            def more() -> list[LogLine] | None:
                whole = whole_records(doc)
                if whole is None:
                    return None
                return build_lines(whole, evidence, doc.tracebacks, doc.errors, doc.line_count)

    else:
        records = [Record(line=ln.line, text=ln.text, stream=ln.process) for ln in view.lines]
        lines = build_lines(records, evidence)
        note = "stored excerpt" if view.incident is not None else ""
    start = doc.failure_line or (evidence[0] if evidence else 0)
    if not start and doc.tracebacks:
        start = doc.tracebacks[0].start_line
    return LogReader(lines, start, note, more)


class DiagnosisScreen(Screen):
    @property
    def tl(self) -> TracelensApp:
        """The app, with its own attributes known to type checkers."""
        return cast("TracelensApp", self.app)

    BINDINGS = [
        Binding("escape", "back", "Back", tooltip="back to the previous screen"),
        Binding("c", "copy", "Copy", tooltip="copy the highlighted remedy's commands"),
        Binding("C", "copy_all", "Copy all", show=False, tooltip="copy every remedy"),
        Binding("e", "next_evidence", "Evidence", tooltip="next evidence line in the log"),
        Binding("E", "prev_evidence", "Prev", show=False, tooltip="previous evidence line"),
        Binding("s", "save", "Save", tooltip="save the log as an incident"),
        Binding("x", "resolve", "Resolve", tooltip="mark resolved: which remedy worked, a note"),
        Binding("a", "attach", "Attach", tooltip="attach a ticket (URL or key)"),
        Binding("t", "export", "Ticket", tooltip="write a ticket to a file (you choose where)"),
        Binding("1", "tab('diagnosis')", "Diagnosis", show=False),
        Binding("2", "tab('log')", "Log", show=False),
        Binding("3", "tab('traceback')", "Traceback", show=False),
        Binding("4", "tab('facts')", "Facts", show=False),
        Binding("5", "tab('similar')", "Similar", show=False),
    ]

    def __init__(self, view: DiagnosisView) -> None:
        super().__init__()
        self.view = view
        self._built = {"diagnosis"}
        """The tabs composed so far."""

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="diagnosis"):
            with TabPane("1 Diagnosis", id="diagnosis"):
                with VerticalScroll():
                    yield Static(self._summary(), id="summary")
                    yield Label(
                        Text("Remedies, in order (↑↓ choose, c copies one, C all)", style="bold")
                    )
                    yield RemedyList(
                        self.view.diagnoses[0].remedies if self.view.diagnoses else [],
                        self.view.incident.remedy_worked if self.view.incident else None,
                        id="remedies",
                    )
                    yield Static(self._rest(), id="rest")
            # the other tabs are composed when first shown (see _build)
            yield TabPane("2 Log", id="log")
            yield TabPane("3 Traceback", id="traceback")
            yield TabPane("4 Facts", id="facts")
            yield TabPane("5 Similar", id="similar")
        yield KeyFooter()

    async def _build(self, tab: str) -> None:
        """Compose a tab the first time it is shown. A screen often closes with its other
        tabs unseen, and every widget mounted is styled, hidden or not, each part of a table,
        tree or log view (its component classes) as well: opening the screen styled 246
        widgets and parts with these tabs composed, 131 without. The similar tab asks the
        store, and a large live log's reader starts reading the whole file, only then."""
        if tab in self._built:
            return
        self._built.add(tab)
        pane = self.query_one(f"#{tab}", TabPane)
        if tab == "log":
            await pane.mount(reader_for(self.view))
        elif tab == "traceback":
            tree = TracebackTree(self.view.tracebacks, self._no_traceback(), id="tracebacks")
            await pane.mount(tree)
        elif tab == "facts":
            await pane.mount(DataTable(id="factstable", cursor_type="row"))
            self._fill_facts()
        elif tab == "similar":
            await pane.mount(DataTable(id="similartable", cursor_type="row"))
            self._fill_similar()

    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A tab chosen by the mouse or on the tab bar: composed now if it is new."""
        if event.pane.id:
            await self._build(event.pane.id)

    def on_mount(self) -> None:
        self.title = "tracelens"
        self.sub_title = self.view.source
        remedies = self.query_one(RemedyList)
        # the remedies have the keys (Up/Down choose, c copies), the page stays at its top
        (remedies if remedies.remedies else self.query_one(VerticalScroll)).focus(
            scroll_visible=False
        )

    # content ------------------------------------------------------------------------------------

    def _summary(self) -> Text:
        v = self.view
        t = Text()
        if v.incident:
            inc = v.incident
            t.append(f"Incident #{inc.id} · seen {inc.count}x · {inc.status}", style="bold")
            if inc.remedy_worked:
                t.append(f" · fixed by: {inc.remedy_worked}", style="green")
            if inc.tickets:
                t.append(" · ticket " + ", ".join(tk.ref for tk in inc.tickets), style="bold cyan")
            t.append("\n\n")
        if not v.diagnoses:
            t.append("No known failure matched this log.\n", style="bold")
            if v.tracebacks:
                exc = v.tracebacks[0].exception
                if exc:
                    t.append(
                        f"First exception: {exc.type}: {exc.message.splitlines()[0] if exc.message else ''}\n"
                    )
            return t
        d = v.diagnoses[0]
        t.append(d.title + "\n", style="bold")
        kind = "symptom" if d.secondary else "root cause"
        t.append(
            f"{d.category} · {d.severity} · {kind} · confidence {d.confidence:.2f} · {d.rule_id}\n\n",
            style="dim",
        )
        t.append(d.root_cause + "\n")
        for note in d.notes:
            t.append("\nNote: ", style="bold yellow")
            t.append(note + "\n")
        return t

    def _rest(self) -> Text:
        t = Text()
        if not self.view.diagnoses:
            return t
        d = self.view.diagnoses[0]
        if d.does_not_help:
            t.append("\nDoes not help\n", style="bold")
            for x in d.does_not_help:
                t.append(f"  - {x}\n")
        if d.evidence:
            t.append("\nEvidence (tab 2 shows it in the log)\n", style="bold")
            for e in d.evidence:
                t.append(f"  {e.line:>6}: {e.text[:200]}\n")
        if d.references:
            t.append("\nReferences\n", style="bold")
            for ref in d.references:
                t.append(f"  {ref}\n")
        others = self.view.diagnoses[1:]
        if others:
            t.append("\nAlso found\n", style="bold")
            for o in others:
                kind = "symptom" if o.secondary else "cause"
                t.append(f"  - {o.title} ({o.category}, {kind}, {o.rule_id})\n")
        return t

    def _no_traceback(self) -> str:
        """What the traceback tab says when it has none to show."""
        if self.view.live is not None or self.view.report.document.records:
            return "no traceback in this log"
        return "this incident was stored without its parsed log (by an older tracelens); see the excerpt in tab 2"

    def _fill_facts(self) -> None:
        table = self.query_one("#factstable", DataTable)
        table.add_columns("fact", "value")
        for name, value in sorted(self.view.report.facts.items()):
            table.add_row(Text(name), Text(str(value)))

    def _fill_similar(self) -> None:
        table = self.query_one("#similartable", DataTable)
        table.add_columns("score", "#", "seen", "status", "title", "fixed by")
        if self.view.incident and not self.view.similar:  # a stored incident: ask the store
            from tracelens.incidents.similar import similar_to_incident

            store = self.tl.store(create=False)
            if store is not None:
                try:
                    self.view.similar = similar_to_incident(store, self.view.incident)
                finally:
                    store.close()
        for h in self.view.similar:
            table.add_row(
                Text(f"{h.score:.0f}"),
                Text(str(h.id)),
                Text(str(h.count)),
                Text(h.status),
                Text(h.title[:60]),
                Text(h.fix or h.remedy_worked or ""),
                key=str(h.id),
            )

    # actions ------------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.app.pop_screen()

    async def action_tab(self, tab: str) -> None:
        await self._build(tab)
        self.query_one(TabbedContent).active = tab
        if tab == "log":  # the log's keys (/ n w l p) work at once
            self.query_one(LogReader).view.focus()

    def action_copy(self) -> None:
        chosen = self.query_one(RemedyList).selected
        if chosen is None:
            self.notify("no remedy to copy", severity="warning")
            return
        from tracelens.tui.remedies import copy_text

        k, remedy = chosen
        self.copied = copy_text(remedy)
        what = "its commands" if remedy.commands else "its steps"
        self.tl.copy(self.copied, f"remedy {k} ({what})")

    def action_copy_all(self) -> None:
        remedies = self.query_one(RemedyList)
        if not remedies.remedies:
            self.notify("no remedy to copy", severity="warning")
            return
        self.copied = remedies.all_text()
        self.tl.copy(self.copied, f"all {len(remedies.remedies)} remedies")

    async def _jump(self, step: int) -> None:
        await self.action_tab("log")
        if not self.query_one(LogReader).view.next_evidence(step):
            self.notify("no evidence lines", severity="warning")

    async def action_next_evidence(self) -> None:
        await self._jump(1)

    async def action_prev_evidence(self) -> None:
        await self._jump(-1)

    def action_save(self) -> None:
        if self.view.live is None:
            self.notify("this incident is already stored", severity="warning")
            return
        from tracelens.incidents.incident import save
        from tracelens.incidents.redact import Redactor
        from tracelens.incidents.store import StoreError

        store = self.tl.store()
        if store is None:
            return
        try:
            rec = save(store, self.view.live, Redactor(), source=self.view.source)
        except StoreError as exc:  # read-only, full or damaged: say so, keep the app
            store.close()
            self.notify(str(exc), severity="error")
            return
        if rec is None:
            store.close()
            self.notify("no failure in this log: nothing saved", severity="warning")
            return
        self.view.incident = store.incident(rec.incident_id)
        store.close()
        self.query_one("#summary", Static).update(self._summary())
        self.notify(f"saved as incident #{rec.incident_id}" + ("" if rec.new else " (seen before)"))

    def _need_incident(self) -> bool:
        if self.view.incident is None:
            self.notify("save the log as an incident first (s)", severity="warning")
            return False
        return True

    def action_resolve(self) -> None:
        if not self._need_incident():
            return
        from tracelens.tui.screens.dialogs import ResolveScreen

        remedies = [
            r.title for r in (self.view.diagnoses[0].remedies if self.view.diagnoses else [])
        ]
        self.app.push_screen(ResolveScreen(remedies), self._resolved)

    def _resolved(self, result) -> None:
        if not result:
            return
        remedy, note = result
        from tracelens.incidents.store import StoreError

        if self.view.incident is None:  # only a saved incident is resolved
            return
        store = self.tl.store()
        if store is None:
            return
        try:
            store.resolve(self.view.incident.id, remedy, note)
        except StoreError as exc:
            store.close()
            self.notify(str(exc), severity="error")
            return
        self.view.incident = store.incident(self.view.incident.id)
        store.close()
        self.query_one("#summary", Static).update(self._summary())
        self.notify(f"incident #{self.view.incident.id} resolved")

    def action_attach(self) -> None:
        if not self._need_incident():
            return
        from tracelens.tui.screens.dialogs import AttachScreen

        self.app.push_screen(AttachScreen(), self._attached)

    def _attached(self, ref) -> None:
        if not ref:
            return
        from tracelens.incidents.store import StoreError

        if self.view.incident is None:  # only a saved incident takes a ticket
            return
        store = self.tl.store()
        if store is None:
            return
        try:
            store.attach(self.view.incident.id, ref)
            self.view.incident = store.incident(self.view.incident.id)
        except StoreError as exc:
            self.notify(str(exc), severity="error")
            return
        finally:
            store.close()
        self.query_one("#summary", Static).update(self._summary())  # the header shows it
        self.notify(f"attached {ref}")

    def action_export(self) -> None:
        from tracelens.tui.screens.dialogs import ExportScreen

        self.app.push_screen(ExportScreen(self.view))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "similartable" and event.row_key.value:
            self.tl.open_incident(int(event.row_key.value))

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
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import (
    DataTable,
    Footer,
    Header,
    Label,
    Static,
    TabbedContent,
    TabPane,
    Tree,
)

from tracelens.models import Traceback
from tracelens.parse.frames import is_plumbing, is_stdlib
from tracelens.tui.remedies import RemedyList
from tracelens.tui.view import DiagnosisView

CONTEXT = 6
"""Log lines shown around each evidence line."""


def is_library(frame) -> bool:
    """Plumbing: the standard library, import machinery, and the generic call/dispatch frames
    that fingerprints skip too (torch.nn call wrappers, multiprocessing, asyncio …)."""
    return is_stdlib(frame) or is_plumbing(frame, keep_module_level=True)


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
        self.evidence_rows: list[int] = []

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
            with TabPane("2 Log", id="log"):
                yield DataTable(id="loglines", cursor_type="row", show_header=False)
            with TabPane("3 Traceback", id="traceback"):
                yield Tree(Text("tracebacks"), id="tracebacks")
            with TabPane("4 Facts", id="facts"):
                yield DataTable(id="factstable", cursor_type="row")
            with TabPane("5 Similar", id="similar"):
                yield DataTable(id="similartable", cursor_type="row")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.title = "tracelens"
        self.sub_title = self.view.source
        self._fill_log()
        self._fill_tracebacks()
        self._fill_facts()
        self._fill_similar()
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

    def _fill_log(self) -> None:
        table = self.query_one("#loglines", DataTable)
        table.add_column("line", key="line")
        table.add_column("text", key="text")
        evidence = set(self.view.evidence_lines)
        wanted: set[int] = set()
        for n in evidence:
            wanted.update(range(n - CONTEXT, n + CONTEXT + 1))
        if not evidence:
            wanted = {ln.line for ln in self.view.lines[:400]}
        last = None
        self.evidence_rows = []
        for ln in self.view.lines:
            n, text = ln.line, ln.text
            if n not in wanted:
                continue
            if last is not None and n > last + 1:
                table.add_row(Text("…", style="dim"), Text(""))
            style = "bold black on yellow" if n in evidence else ""
            row = table.add_row(Text(str(n), style="dim"), Text(text[:1000], style=style))
            if n in evidence and (
                not self.evidence_rows or self._row_line(self.evidence_rows[-1]) != n
            ):
                self.evidence_rows.append(table.get_row_index(row))
            last = n

    def _row_line(self, index: int) -> int:
        cell = self.query_one("#loglines", DataTable).get_cell_at(Coordinate(index, 0))
        return int(str(cell)) if str(cell).isdigit() else -1

    def _fill_tracebacks(self) -> None:
        tree = self.query_one("#tracebacks", Tree)
        tree.show_root = False
        if not self.view.tracebacks:
            tree.root.add_leaf(
                Text(
                    "no traceback in this log"
                    if self.view.live
                    else "tracebacks are kept for live logs only; see the excerpt in tab 2"
                )
            )
        for tb in self.view.tracebacks:
            self._add_traceback(tree.root, tb)
        tree.root.expand()

    def _add_traceback(self, parent, tb: Traceback) -> None:
        exc = tb.exception
        head = (
            f"{exc.type}: {exc.message.splitlines()[0] if exc and exc.message else ''}"
            if exc
            else "(cut off)"
        )
        where = f"line {tb.start_line}, {len(tb.streams) or 1} stream(s)"
        node = parent.add(Text(f"{head[:150]}  [{where}]", style="bold"), expand=True)
        for seg in tb.segments:
            if len(tb.segments) > 1 or seg.link:
                label = {
                    "cause": "direct cause of the next",
                    "context": "raised while handling the previous",
                }.get(seg.link or "", "first")
                seg_node = node.add(Text(f"segment ({label})", style="italic"), expand=True)
            else:
                seg_node = node
            group: list = []

            def flush(group: list = group, seg_node=seg_node) -> None:
                if group:
                    lib = seg_node.add(
                        Text(f"{len(group)} library/plumbing frame(s)", style="dim"), expand=False
                    )
                    for f in group:
                        lib.add_leaf(
                            Text(f"{f.module or f.file}:{f.lineno} in {f.function}", style="dim")
                        )
                    group.clear()

            for f in seg.frames:
                if is_library(f):
                    group.append(f)
                    continue
                flush()
                seg_node.add_leaf(Text(f"{f.module or f.file}:{f.lineno} in {f.function}"))
            flush()
            if seg.exception is not None:
                seg_node.add_leaf(
                    Text(f"{seg.exception.type}: {seg.exception.message[:300]}", style="red")
                )
                for sub in seg.exception.nested:
                    self._add_traceback(seg_node, sub)

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
                Text(f"{h['score']:.0f}"),
                Text(str(h["id"])),
                Text(str(h["count"])),
                Text(h["status"]),
                Text(h["title"][:60]),
                Text(h.get("fix") or h.get("remedy_worked") or ""),
                key=str(h["id"]),
            )

    # actions ------------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

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

    def _jump(self, step: int) -> None:
        if not self.evidence_rows:
            self.notify("no evidence lines", severity="warning")
            return
        self.query_one(TabbedContent).active = "log"
        table = self.query_one("#loglines", DataTable)
        cur = table.cursor_row
        rows = self.evidence_rows
        if step > 0:
            nxt = next((r for r in rows if r > cur), rows[0])
        else:
            nxt = next((r for r in reversed(rows) if r < cur), rows[-1])
        table.move_cursor(row=nxt)
        table.focus()

    def action_next_evidence(self) -> None:
        self._jump(1)

    def action_prev_evidence(self) -> None:
        self._jump(-1)

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

"""The help screen's key table, made from the screens' own bindings (their ``tooltip`` says what
a key does), so the help lists what the keys really do and nothing the app does not have."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual.binding import Binding

EXTRA: dict[str, list[tuple[str, str]]] = {
    "Everywhere": [("ctrl+p", "command palette: every theme, every command")],
    "Incident list": [("↑ ↓", "move; enter opens; click a header to sort by it")],
    "Diagnosis": [
        ("↑ ↓", "choose a remedy (tab 1); past the last one the page scrolls on"),
        ("pgup pgdn", "scroll the page"),
        ("tab", "the next part of the screen (the tabs' titles, then their content)"),
    ],
    "Log (tab 2)": [
        ("↑ ↓", "move; pgup pgdn: a page; home end: first, last line"),
        ("← →", "scroll long lines sideways (when not wrapped)"),
        ("enter esc", "in the search box: back to the log, the matches kept"),
    ],
    "Rules": [
        ("type", "search: the box has the keys when the browser opens"),
        ("↑ ↓", "choose a rule (in the box too); enter or ↓ go to the list"),
        ("enter", "in the list: read the rule (↑ ↓ pgup pgdn scroll it)"),
    ],
    "Dialogs": [("enter", "confirm"), ("esc", "cancel")],
}
"""Keys a screen's widgets handle themselves (lists, search boxes), per help section."""


def _bindings(owner) -> list[Binding]:
    out = []
    for b in getattr(owner, "BINDINGS", []):
        out.append(b if isinstance(b, Binding) else Binding(*b))
    return out


def key_rows(owner, display: Callable[[Binding], str]) -> list[tuple[str, str]]:
    """(key, what it does) for each binding of ``owner`` (a screen or app class); the tab
    keys (``tab('name')`` actions) in one row."""
    rows: list[tuple[str, str]] = []
    tabs: list[Binding] = []
    for b in _bindings(owner):
        if b.action.startswith("tab("):
            tabs.append(b)
            continue
        rows.append((display(b), b.tooltip or b.description))
    if tabs:
        keys = f"{display(tabs[0])}-{display(tabs[-1])}"
        rows.insert(0, (keys, "tabs: " + ", ".join(b.description.lower() for b in tabs)))
    return rows


def help_sections(
    owners: Iterable[tuple[str, object]], display: Callable[[Binding], str]
) -> list[tuple[str, list[tuple[str, str]]]]:
    """The help's sections: each owner's bindings, then the keys its widgets handle."""
    out = []
    for title, owner in owners:
        rows = key_rows(owner, display) if owner is not None else []
        out.append((title, rows + EXTRA.get(title, [])))
    return out

"""The footer of every screen: Textual's, drawn again only when the keys it shows change.

Textual's :class:`~textual.widgets.Footer` throws its keys away and mounts new ones whenever
the screen's bindings are refreshed, which is on every change of focus (switching a tab,
opening the log's search box), even when it would show the very same keys: a dozen widgets
to mount and style, most of the work of a tab switch. This one compares what it would show
with what it shows, and composes again only on a difference. Its keys are made compact
before they are mounted, not restyled as compact once they are.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class KeyFooter(Footer):
    """A compact footer without the command palette's key, as every screen here has."""

    def __init__(self) -> None:
        super().__init__(compact=True, show_command_palette=False)
        self._shown: tuple | None = None
        """What the keys on show were composed from (``None``: none composed yet)."""

    def shown_keys(self) -> tuple:
        """Everything :meth:`Footer.compose` reads from the screen's bindings: the shown
        bindings in order, each with whether it is enabled and its tooltip."""
        return tuple(
            active[1:] for active in self.screen.active_bindings.values() if active[1].show
        )

    def compose(self) -> ComposeResult:
        self._shown = self.shown_keys() if self._bindings_ready else None
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                # the class its ``compact`` watcher would add once mounted, and then style
                # the key again for
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if not self.is_attached or self._shown == self.shown_keys():
            return
        await self.recompose()

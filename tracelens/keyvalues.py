"""``key=value`` payloads as programs print them (vLLM's engine config line, argparse's
``Namespace(...)``, SGLang's ``ServerArgs(...)``, ``{'key': value}`` dicts): split into pairs in
one pass, quotes and brackets respected."""

from __future__ import annotations

from tracelens.pyregex import compile_re

_QUOTED = {"'": compile_re(r"'(?:[^'\\]|\\.)*'"), '"': compile_re(r'"(?:[^"\\]|\\.)*"')}


# A key's characters: ``\w`` (what ``str.isalnum()`` accepts, or ``_``), read by one regex call
# instead of one Python call per character
_WORDS = compile_re(r"\w*")
_KEY_AFTER = compile_re(r", \w+=")


class _KeyValues:
    """The ``key=value`` pairs of a payload such as ``model='m', tp_size=4, quantization=None)``
    (vLLM's engine config, argparse's ``Namespace(...)``, SGLang's ``ServerArgs(...)``).

    A value is a quoted string, or the text up to the next ``, key=``, up to a ``)`` followed
    by a space or ending the text, or up to the end. One pass over the text: each position is
    looked at a bounded number of times, however the payload is shaped (a regex with the same
    meaning needs a lookahead and backtracks quadratically on a long value).
    """

    def __init__(self, text: str):
        self.text = text
        self.close = -1  # the first ``)`` ending a value at or after the last value start
        self.comma = (-1, False)  # the last comma checked: (position, a key follows it)

    def pairs(self) -> list[tuple[str, str]]:
        text = self.text
        out: list[tuple[str, str]] = []
        pos = 0
        backwards = text[::-1]  # the key before "=": the word characters read backwards
        n = len(text)
        while (eq := text.find("=", pos)) >= 0:
            # backwards[n - eq:] reads text[:eq] from its end; the run stops at pos
            k = n - _WORDS.match(backwards, n - eq, n - pos).end()  # type: ignore[union-attr]
            start = eq + 1
            end = self._value_end(start) if k < eq else None
            if end is None:
                pos = start  # no pair with this "=": look for the next one
                continue
            out.append((text[k:eq], text[start:end]))
            pos = end
        return out

    def _value_end(self, start: int) -> int | None:
        text, n = self.text, len(self.text)
        quote = _QUOTED.get(text[start : start + 1])
        if quote is not None and (m := quote.match(text, start)) and self._ends_value(m.end()):
            return m.end()
        comma = text.find(",", start)
        comma = n if comma < 0 else comma
        close = self._close_from(start)
        if close < comma:
            return close
        if comma < n:
            return comma if self._key_after(comma) else None
        return n - 1 if n - 1 >= start and text.endswith(")") else n

    def _ends_value(self, e: int) -> bool:
        """Whether a value may end at ``e``."""
        text, n = self.text, len(self.text)
        if e == n or (e == n - 1 and text[e] == ")"):
            return True
        if text[e] == ")" and self._space_after_close(e):
            return True
        return text[e] == "," and self._key_after(e)

    def _space_after_close(self, e: int) -> bool:
        """``)`` at ``e`` followed by whitespace, or by ``.`` and whitespace."""
        nxt = self.text[e + 1 : e + 3]
        return nxt[:1].isspace() or (nxt[:1] == "." and nxt[1:2].isspace())

    def _close_from(self, start: int) -> int:
        """The first ``)`` at or after ``start`` that ends a value (``len`` when none)."""
        if self.close >= start:
            return self.close
        text = self.text
        i = text.find(")", start)
        while i >= 0 and not self._space_after_close(i):
            i = text.find(")", i + 1)
        self.close = len(text) if i < 0 else i
        return self.close

    def _key_after(self, comma: int) -> bool:
        """``, key=`` at ``comma``."""
        if self.comma[0] == comma:
            return self.comma[1]
        ok = _KEY_AFTER.match(self.text, comma) is not None
        self.comma = (comma, ok)
        return ok


def kv_pairs(text: str) -> list[tuple[str, str]]:
    """The ``key=value`` pairs of a payload.

    >>> kv_pairs("model='/m, x', tp=4, q=None) more")
    [('model', "'/m, x'"), ('tp', '4'), ('q', 'None')]
    """
    return _KeyValues(text).pairs()

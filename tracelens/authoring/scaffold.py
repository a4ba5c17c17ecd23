"""``tracelens rules new``: a rule and its example log, scaffolded (from a log, its originating
failure becomes the rule's conditions).

A scaffold is a valid rule that passes ``rules test`` at once when made from a log; what a
person must still write (the cause, the remedies, references) says ``TODO``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tracelens.parse.normalize import normalize
from tracelens.pyregex import compile_re

_ID = compile_re(r"^[a-z0-9][a-z0-9_.-]*(?:/[a-z0-9][a-z0-9_.-]*)+$")
_PLACEHOLDER = compile_re(r"<(?:n|hex|path|size|uuid|id|ts)>")


class ScaffoldError(Exception):
    """One line: why the scaffold cannot be written."""


@dataclass
class Scaffold:
    rule_path: Path
    example_path: Path | None
    text: str


def _yaml_str(text: str) -> str:
    """A single-quoted YAML scalar."""
    return "'" + text.replace("'", "''") + "'"


def message_regex(message: str) -> str:
    """An RE2 regex for the constant part of a message: the first line, its varying parts
    (numbers, paths, hex, ids, sizes) matched loosely.

    >>> message_regex("Tried to allocate 2.00 GiB on GPU 3")
    'Tried to allocate \\\\S+ on GPU \\\\S+'
    """
    first = (message.strip().splitlines() or [""])[0][:160]
    parts = _PLACEHOLDER.split(normalize(first))
    return r"\S+".join(re.escape(p) for p in parts).replace(r"\ ", " ")


def _needs(origin) -> str:
    """The longest run of plain words in the message: a literal every such log holds."""
    text = normalize(
        (origin.message or origin.text).splitlines()[0] if (origin.message or origin.text) else ""
    )
    runs = [r.strip(" :,.'\"") for r in _PLACEHOLDER.split(text)]
    runs = [r for r in runs if len(r) >= 6]
    if runs:
        return max(runs, key=len)[:60]
    return origin.type.rsplit(".", 1)[-1] if origin.type else ""


def build(rule_id: str, category: str, origin) -> str:
    """The YAML text of a rule for ``origin`` (or a blank template without one)."""
    lines = [
        f"id: {rule_id}",
        "title: TODO one line that names the failure",
        f"category: {category}",
        "severity: error",
        "secondary: false",
        "status: experimental",
    ]
    if origin is not None:
        need = _needs(origin)
        lines.append(f"needs: [{_yaml_str(need)}]" if need else "needs: []")
        conds = []
        if origin.type:
            short = origin.type.rsplit(".", 1)[-1]
            conds.append(
                f"    - exception: {{type: {_yaml_str(re.escape(short) + '$')}, message: {_yaml_str(message_regex(origin.message))}}}"
            )
        else:
            conds.append(f"    - line: {_yaml_str(message_regex(origin.text))}")
        lines += ["match:", "  all:", *conds]
        if (
            origin.frame is not None
            and origin.frame.function
            and not origin.frame.function.startswith("<")
        ):
            lines += [
                "  any:",
                f"    - frame: {{function: {_yaml_str('^' + re.escape(origin.frame.function) + '$')}}}",
            ]
            if origin.type:
                lines.append(
                    f"    - exception: {{type: {_yaml_str(re.escape(origin.type.rsplit('.', 1)[-1]) + '$')}}}"
                )
    else:
        lines += [
            "needs: []",
            "match:",
            "  all:",
            "    - line: 'TODO a regex for the constant part of the message'",
        ]
    lines += [
        "root_cause: >",
        "  TODO what failed and why, in the user's terms; {fact} placeholders are filled from the log.",
        "remedies:",
        "  - title: TODO the first thing to try",
        "    steps: []",
        "    commands: []",
        "does_not_help: []",
        "references:",
        "  - https://github.com/OWNER/REPO/issues/TODO",
        "upstream: []",
        "verified: []",
    ]
    return "\n".join(lines) + "\n"


def scaffold(
    rule_id: str, rules_dir: Path, log: Path | None, category: str | None, wrappers
) -> Scaffold:
    """Write ``rules_dir/rule_id.yaml`` (and the log as its example); raise ScaffoldError."""
    if not _ID.match(rule_id):
        raise ScaffoldError(
            f"rule id {rule_id!r}: use lowercase DOMAIN/NAME (for example vllm/my-failure)"
        )
    rule_path = rules_dir / f"{rule_id}.yaml"
    if rule_path.exists():
        raise ScaffoldError(f"{rule_path} exists already")
    origin = None
    data = b""
    if log is not None:
        from tracelens.engine import parse
        from tracelens.rulebook.guess import guess_category
        from tracelens.rulebook.origin import find_origin

        try:
            data = log.read_bytes()
        except OSError as exc:
            raise ScaffoldError(f"{log}: cannot read ({exc.strerror or exc})") from None
        origin, _ = find_origin(parse(data, str(log)), wrappers)
        if origin is None:
            raise ScaffoldError(f"{log}: no failure found to make a rule of")
        category = category or guess_category(origin)
    guessed = category in (None, "unrecognized")
    text = build(
        rule_id, category if category is not None and not guessed else "config-invalid", origin
    )
    if guessed:
        text = text.replace(
            "\ncategory: config-invalid\n",
            "\ncategory: config-invalid  # TODO one of rules/categories.yaml\n",
            1,
        )
    example = None
    try:
        rule_path.parent.mkdir(parents=True, exist_ok=True)
        rule_path.write_text(text, encoding="utf-8")
        if log is not None:
            example = rule_path.with_name(rule_path.name[: -len(".yaml")] + ".example.log")
            example.write_bytes(data)
    except OSError as exc:
        raise ScaffoldError(f"{rule_path.parent}: cannot write ({exc.strerror or exc})") from None
    return Scaffold(rule_path, example, text)

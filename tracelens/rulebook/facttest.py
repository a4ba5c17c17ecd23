"""Fact tests: ``'<0.17'``, ``'>=12.0'``, ``'>=0.10,<0.17'``, ``'!=auto'`` (PEP 440 for versions,
numbers otherwise) or a case-insensitive glob such as ``'fp8*'``."""

from __future__ import annotations

import fnmatch
import re
from typing import Callable

from tracelens.pyregex import compile_re

_OPS = compile_re(r"^\s*(?:<=|>=|==|!=|~=|<|>)")


def parse_fact_test(test: str, where: str = "fact") -> Callable[[str], bool]:
    """A fact test: comparisons (PEP 440 for versions, numbers otherwise) or a glob.

    >>> parse_fact_test(">=12.0")("12.0"), parse_fact_test("<0.17")("0.16.0rc2.dev313")
    (True, True)
    >>> parse_fact_test("fp8*")("FP8_E4M3"), parse_fact_test("!=auto")("auto")
    (True, False)
    """
    test = test.strip()
    if not _OPS.match(test):
        pattern = test.lower()
        return lambda value: fnmatch.fnmatchcase(value.lower(), pattern)
    clauses = [c.strip() for c in test.split(",") if c.strip()]
    parsed: list[tuple[str, str]] = []
    for clause in clauses:
        m = re.match(r"(<=|>=|==|!=|~=|<|>)\s*(.+)$", clause)
        if not m:
            raise ValueError(f"{where}: cannot read the test {test!r}")
        parsed.append((m.group(1), m.group(2).strip()))
    from packaging.specifiers import (  # only rules that compare versions
        InvalidSpecifier,
        SpecifierSet,
    )
    from packaging.version import InvalidVersion, Version

    try:
        spec = SpecifierSet(test.replace(" ", ""), prereleases=True)
    except InvalidSpecifier:
        spec = None
    if spec is None:
        # without a version on the right, only numbers can be ordered; an ordering against
        # anything else (">=not.a.version") is false for every value
        for op, v in parsed:
            if op not in ("==", "!=") and _number(v) is None:
                raise ValueError(
                    f"{where}: {test!r} can never match: {v!r} is neither a version nor a number"
                )

    def check(value: str) -> bool:
        num = _number(value)
        if (
            all(_number(v) is not None for _, v in parsed)
            and num is not None
            and (spec is None or not _looks_version(value))
        ):
            return all(_compare(num, op, _number(v)) for op, v in parsed)  # type: ignore[arg-type]
        if spec is not None:
            try:
                return Version(_clean_version(value)) in spec
            except InvalidVersion:
                pass
        if num is not None and all(_number(v) is not None for _, v in parsed):
            return all(_compare(num, op, _number(v)) for op, v in parsed)  # type: ignore[arg-type]
        return all(
            (value == v) if op == "==" else (value != v) if op == "!=" else False
            for op, v in parsed
        )

    return check


def _looks_version(value: str) -> bool:
    return value.count(".") >= 2 or bool(re.search(r"[a-z]", value))


def _clean_version(value: str) -> str:
    return value.strip().lstrip("v").split("+")[0] if "+" in value else value.strip().lstrip("v")


def _number(v: str) -> float | None:
    try:
        return float(v)
    except ValueError:
        return None


def _compare(a: float, op: str, b: float) -> bool:
    return {
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
        "==": a == b,
        "!=": a != b,
        "~=": a >= b,
    }[op]

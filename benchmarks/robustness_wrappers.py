"""How well diagnoses survive the ways logs reach tracelens: every corpus incident log with an
expected first rule is rewritten as a collector, a terminal or a paste would give it (a prefix on
every line, JSON lines, lines cut at a console width, only the tail), and the first rule is
compared with the expected one.

    python benchmarks/robustness_wrappers.py            # every form
    python benchmarks/robustness_wrappers.py stern wrap80 --show 10

Prints, per form, how many logs kept their expected first rule, and the first ``--show`` that
did not (log, expected, got).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tracelens import engine  # noqa: E402
from tracelens.rulebook.load import default_rules  # noqa: E402


def _prefix(make: Callable[[int], bytes]) -> Callable[[list[bytes]], bytes]:
    return lambda lines: b"".join(make(i) + ln for i, ln in enumerate(lines))


def _cut(width: int) -> Callable[[list[bytes]], bytes]:
    def cut(lines: list[bytes]) -> bytes:
        out = []
        for ln in lines:
            body = ln.rstrip(b"\n")
            out += [body[i : i + width] + b"\n" for i in range(0, max(1, len(body)), width)]
        return b"".join(out)

    return cut


def _json_lines(lines: list[bytes]) -> bytes:
    return b"".join(
        json.dumps(
            {
                "log": ln.decode("utf-8", "replace"),
                "stream": "stderr",
                "time": "2024-05-01T10:00:00.1Z",
            }
        ).encode()
        + b"\n"
        for ln in lines
    )


FORMS: dict[str, Callable[[list[bytes]], bytes]] = {
    "crlf": lambda lines: b"".join(ln.rstrip(b"\r\n") + b"\r\n" for ln in lines),
    "github-actions": _prefix(
        lambda i: b"2024-05-01T10:%02d:%02d.1234567Z " % (i // 60 % 60, i % 60)
    ),
    "docker-timestamps": _prefix(lambda i: b"2025-09-14T08:01:10.120431786Z "),
    "compose": _prefix(lambda i: b"vllm-server-1  | "),
    "srun-label": _prefix(lambda i: b"0: "),
    "pdsh": _prefix(lambda i: b"worker-1: "),
    "pdsh-host-without-dash": _prefix(lambda i: b"node1: "),
    "kubectl-prefix": _prefix(lambda i: b"[pod/trainer-0/main] "),
    "syslog": _prefix(lambda i: b"Nov 29 03:14:12 gpu-node-7 python3[48211]: "),
    "journalctl-short-iso": _prefix(
        lambda i: b"2024-05-01T10:00:00+0000 gpu-node-7 python3[48211]: "
    ),
    "time-column-tab": _prefix(lambda i: b"2024-05-01T10:00:00.123Z\t"),
    "epoch-column-tab": _prefix(lambda i: b"1714557600123\t"),
    "aws-logs-tail": _prefix(lambda i: b"2024-05-01T10:00:00.123000+00:00 algo-1-1714557600 "),
    "loki": _prefix(lambda i: b'2024-05-01T10:00:00Z {container="vllm", pod="vllm-0"} '),
    "stern": _prefix(lambda i: b"vllm-7d9f5c6b8-x2x4q vllm "),
    "host-in-brackets": _prefix(lambda i: b"[gpu-node-1] "),
    "airflow": _prefix(lambda i: b"[2024-05-01, 10:00:00 UTC] {subprocess.py:93} INFO - "),
    "ray-worker": _prefix(lambda i: b"(RayWorkerWrapper pid=4242, ip=10.0.0.8) "),
    "skypilot": _prefix(lambda i: b"(head, rank=0, pid=1234) "),
    "python-logging-bracket": _prefix(lambda i: b"2024-05-01 10:00:00,123 [ERROR] trainer: "),
    "docker-json-file": _json_lines,
    "cut-at-80": _cut(80),
    "cut-at-120": _cut(120),
    "last-60-lines": lambda lines: b"".join(lines[-60:]),
    "first-third-missing": lambda lines: b"".join(lines[len(lines) // 3 :]),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("forms", nargs="*", help=f"forms to try (default: all): {', '.join(FORMS)}")
    ap.add_argument("--show", type=int, default=0, help="list this many logs that changed per form")
    args = ap.parse_args()
    rules = default_rules()
    cases = []
    for log in sorted((ROOT / "corpus" / "incidents").glob("*.log")):
        expect = yaml.safe_load(
            log.with_name(log.name[: -len(".log")] + ".expect.yaml").read_text()
        )
        if expect and expect.get("top_rule"):
            cases.append((log.name, log.read_bytes(), expect["top_rule"]))
    print(f"{len(cases)} corpus incident logs with an expected first rule")
    for name in args.forms or FORMS:
        form = FORMS[name]
        changed = []
        for name_, data, want in cases:
            report = engine.diagnose(form(data.splitlines(keepends=True)), rules)
            got = report.diagnoses[0].rule_id if report.diagnoses else None
            if got != want:
                changed.append((name_, want, got))
        print(f"{name:24} {len(cases) - len(changed):4}/{len(cases)} kept")
        for row in changed[: args.show]:
            print("    ", *row)


if __name__ == "__main__":
    main()

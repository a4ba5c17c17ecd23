"""A long fuzzing run over mutated corpus logs: crashes, hangs and the slowest inputs.

Input number N is ``mutations.from_seed(SEED + N)`` (tests/mutations.py: one to four byte
flips, cuts, duplicated lines, envelope prefixes, bare-CR line ends or spliced logs over a
random corpus log), so any input is rebuilt from its seed. Worker processes run
``diagnose`` and render JSON, text and Markdown; an input that takes longer than ``--timeout``
is killed and reported as a hang. Crashing, hanging and the slowest inputs are written to
``--out`` for replay.

    python benchmarks/fuzz_corpus.py --minutes 10
    python benchmarks/fuzz_corpus.py --minutes 480 --workers 8 --seed 1000000 --out fuzz-out > fuzz.txt 2>&1 &
    python benchmarks/fuzz_corpus.py --replay 1234567     # one input again, with its traceback

For a run of hours, start it in the background as above (a new ``--seed`` each time, so a run
explores inputs the last did not) and read ``fuzz.txt``: a progress line each minute, then
the summary.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
import traceback
from multiprocessing.connection import Connection, wait
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from mutations import from_seed  # noqa: E402  (tests/ is put on the path first)


def _run(data: bytes) -> None:
    from tracelens.engine import diagnose
    from tracelens.render.jsonout import render_json
    from tracelens.render.markdown import render_markdown
    from tracelens.render.text import render_text

    rep = diagnose(data)
    render_json(rep)
    render_text(rep, full=True)
    render_markdown(rep)


def _worker(conn: Connection) -> None:
    # imports, rule loading and the index of known failures, outside the first input's time
    _run(b'Traceback (most recent call last):\n  File "a.py", line 1, in f\nWarmUpError: x\n')
    conn.send(None)
    while (seed := conn.recv()) is not None:
        log, applied, data = from_seed(seed)
        t0 = time.perf_counter()
        error = None
        try:
            _run(data)
        except Exception as exc:  # noqa: BLE001  (a crash is what this run looks for)
            where = traceback.extract_tb(exc.__traceback__)[-1]
            error = f"{type(exc).__name__}: {str(exc)[:200]} ({Path(where.filename).name}:{where.lineno})"
        conn.send((seed, log, applied, len(data), time.perf_counter() - t0, error))


class Worker:
    def __init__(self) -> None:
        self.conn, child = mp.Pipe()
        self.proc = mp.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()
        self.conn.recv()  # warmed up
        self.seed: int | None = None
        self.since = 0.0

    def give(self, seed: int) -> None:
        self.seed, self.since = seed, time.perf_counter()
        self.conn.send(seed)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.join()


def _save(out: Path | None, kind: str, seed: int) -> str:
    if out is None:
        return ""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{kind}-{seed}.log"
    path.write_bytes(from_seed(seed)[2])
    return f" -> {path}"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--workers", type=int, default=max(1, (mp.cpu_count() or 2) - 1))
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--timeout", type=float, default=60, help="seconds before an input is a hang")
    ap.add_argument(
        "--slowest", type=int, default=10, help="how many of the slowest inputs to report"
    )
    ap.add_argument("--out", type=Path, help="folder for crashing, hanging and the slowest inputs")
    ap.add_argument(
        "--replay", type=int, metavar="SEED", help="run one input here and show any traceback"
    )
    args = ap.parse_args()
    if args.replay is not None:
        log, applied, data = from_seed(args.replay)
        print(f"seed {args.replay}: {log} + {', '.join(applied)} ({len(data)} bytes)")
        t0 = time.perf_counter()
        _run(data)
        print(f"ok in {time.perf_counter() - t0:.2f} s")
        return

    mp.set_start_method("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    workers = [Worker() for _ in range(args.workers)]
    seed = args.seed
    for w in workers:
        w.give(seed)
        seed += 1
    done = 0
    crashes: list[tuple] = []
    hangs: list[tuple] = []
    slow: list[tuple] = []  # (seconds, seed, log, applied, size)
    total_s = 0.0
    start = time.perf_counter()
    end = start + args.minutes * 60
    next_report = start + 60
    while time.perf_counter() < end:
        ready = wait([w.conn for w in workers], timeout=1.0)
        now = time.perf_counter()
        for w in workers:
            if w.conn in ready:
                s, log, applied, size, secs, error = w.conn.recv()
                done += 1
                total_s += secs
                if error:
                    crashes.append((s, log, applied, error))
                    print(
                        f"CRASH seed {s}: {log} + {', '.join(applied)}: {error}{_save(args.out, 'crash', s)}",
                        flush=True,
                    )
                slow.append((secs, s, log, applied, size))
                slow = sorted(slow, reverse=True)[: args.slowest]
                w.give(seed)
                seed += 1
            elif now - w.since > args.timeout:
                log, applied, data = from_seed(w.seed)
                hangs.append((w.seed, log, applied))
                print(
                    f"HANG seed {w.seed}: {log} + {', '.join(applied)} ({len(data)} bytes) still running after {args.timeout:g} s{_save(args.out, 'hang', w.seed)}",
                    flush=True,
                )
                w.kill()
                workers[workers.index(w)] = nw = Worker()
                nw.give(seed)
                seed += 1
        if now >= next_report:
            print(
                f"[{(now - start) / 60:5.1f} min] {done} inputs, {len(crashes)} crashes, {len(hangs)} hangs, slowest {slow[0][0] if slow else 0:.2f} s",
                flush=True,
            )
            next_report += 60
    for w in workers:
        w.kill()
    minutes = (time.perf_counter() - start) / 60
    print(
        f"\n{done} inputs in {minutes:.1f} min ({args.workers} workers, seeds {args.seed}-{seed - 1}); "
        f"{len(crashes)} crashes, {len(hangs)} hangs; mean {total_s / max(done, 1) * 1000:.0f} ms per input"
    )
    print(f"slowest {len(slow)}:")
    for secs, s, log, applied, size in slow:
        print(
            f"  {secs:6.2f} s  {size / 1e3:8.0f} KB  {size / 1e6 / secs if secs else 0:6.2f} MB/s  seed {s}: {log} + {', '.join(applied)}{_save(args.out, 'slow', s)}"
        )
    sys.exit(1 if crashes or hangs else 0)


if __name__ == "__main__":
    main()

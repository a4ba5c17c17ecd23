"""Ingest throughput: logs per second for about 1,000 corpus-sized logs, and where the time goes.

Copies the logs of corpus/incidents, corpus/healthy and corpus/unrecognized (repeated under
other names up to --logs) into a temporary folder, then runs ``tracelens ingest FOLDER
--recount`` into a fresh store with ``--jobs 1``, ``--jobs 2`` and, with --ray, on local Ray
with 1, 2 and all cores (``--ray --jobs N``, ``--ray``). Each configuration runs --repeat
times; the best wall time is kept, with the CPU time of that run (the command and every process
it waited for: the pool's workers; Ray's workers are not its children, so the Ray rows show
the driver's CPU only). ``--recount`` makes every copy count, so every log is diagnosed and
written. tracelens's bytecode is compiled first, as an install has it (:func:`compile_bytecode`). Then, in this process, the stages of one log at a time (read and sniff, parse, rules,
preparing the stored incident: redaction and the stored document; writing the store) in CPU
seconds over all the logs. The load average is printed before and after: the machine is
shared.

With --instructions, instead: the instructions (valgrind's callgrind) one process executes to
read, diagnose and prepare every --step-th log (``fleet.work.diagnose_data``, as a pool worker
does), counted over a second pass after a first over the same logs: a figure the load of a
shared machine does not move (run it with ``PYTHONPATH`` at each tree for before and after).
With ``--instructions --jobs N``: the instructions of the whole ``ingest --jobs N`` command over
those logs instead, the parent and each pool worker from its start.

    python benchmarks/bench_ingest.py [--logs 1000] [--repeat 3] [--ray] [--profile] [--stages-only]
    python benchmarks/bench_ingest.py --tree OTHER_TREE [--repeat 8]
    python benchmarks/bench_ingest.py --instructions [--logs 1000] [--step 10] [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = [ROOT / "corpus" / name for name in ("incidents", "healthy", "unrecognized")]


def make_logs(folder: Path, count: int) -> list[Path]:
    # by file name, not path: the folders' logs interleaved, so any first N hold failing and
    # healthy logs in about the corpus's proportion (by path, every healthy log came first)
    corpus = sorted((p for f in FOLDERS for p in f.glob("*.log")), key=lambda p: (p.name, str(p)))
    out = []
    for k in range(count):
        src = corpus[k % len(corpus)]
        dst = folder / f"{k:05d}-{src.name}"
        shutil.copyfile(src, dst)
        out.append(dst)
    return out


def compile_bytecode() -> str:
    """Compile the bytecode of the tracelens the commands run (``PYTHONPATH`` or the install),
    as an install does: with ``PYTHONDONTWRITEBYTECODE`` set (a development checkout), every
    command and every pool worker would otherwise compile its modules from source again."""
    import importlib.util

    spec = importlib.util.find_spec("tracelens")
    assert spec is not None and spec.origin is not None
    package = str(Path(spec.origin).parent)
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=True)
    return package


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run(
    args: list[str], folder: Path, work: Path, repeat: int, env: dict[str, str] | None = None
) -> tuple[float, float, str]:
    """Best wall seconds of ``tracelens ingest FOLDER --recount ARGS``, its CPU seconds and its
    summary line (``env``: the environment to run it in, for another source tree)."""
    best = (float("inf"), 0.0, "")
    for k in range(repeat):
        db = work / f"bench-{os.getpid()}-{k}.db"
        cmd = [sys.executable, "-m", "tracelens", "ingest", str(folder), "--recount"]
        cmd += ["--db", str(db), *args]
        cpu0, t0 = children_cpu(), time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
        wall, cpu = time.perf_counter() - t0, children_cpu() - cpu0
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        if wall < best[0]:
            best = (wall, cpu, p.stdout.strip().splitlines()[-1])
    return best


def interleaved(folder: Path, work: Path, repeat: int, trees: list[str], logs: int) -> None:
    """``ingest --jobs 2`` of this tree and of each other tree (``PYTHONPATH``, its own cache
    folder), one run of each in turn, ``repeat`` times after one run each to warm their caches:
    a slow spell of a shared machine hits them alike. Prints wall (best, median) and CPU
    (median) of each."""
    envs = {"this tree": None}
    for tree in trees:
        path = Path(tree).resolve()
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(path / "tracelens")])
        envs[str(path)] = dict(
            os.environ, PYTHONPATH=str(path), XDG_CACHE_HOME=str(work / path.name)
        )
    got: dict[str, list[tuple[float, float]]] = {name: [] for name in envs}
    for k in range(repeat + 1):
        for name, env in envs.items():
            wall, cpu, _ = run(["--jobs", "2"], folder, work, 1, env)
            if k:  # the first of each warmed its caches (rule index, nearest-failure index)
                got[name].append((wall, cpu))
    print(f"--jobs 2, interleaved {repeat} times (wall best / median, CPU median):")
    for name, runs in got.items():
        walls = sorted(w for w, _ in runs)
        cpus = sorted(c for _, c in runs)
        print(
            f"  {name:40} {logs / walls[0]:6.1f} / {logs / walls[len(walls) // 2]:6.1f} logs/s"
            f"   CPU {cpus[len(cpus) // 2]:5.2f} s"
        )


def stages(logs: list[Path], work: Path) -> dict[str, float]:
    """CPU seconds of each stage over all the logs, one log at a time in this process."""
    from tracelens import engine
    from tracelens.fleet import work as fleet_work
    from tracelens.fleet.pool import merge
    from tracelens.fleet.sniff import HEAD, not_a_log
    from tracelens.incidents.store import Store

    fleet_work.setup(fleet_work.Settings())
    rules = fleet_work._state["rules"]
    spent = dict.fromkeys(("read, hash, sniff", "parse", "rules", "prepare", "store"), 0.0)
    outcomes = []
    for path in logs:
        c0 = time.process_time()
        data = path.read_bytes()
        reason = not_a_log(data[:HEAD], len(data))
        import hashlib

        digest = hashlib.sha256(data).hexdigest()
        c1 = time.process_time()
        if reason is not None:
            spent["read, hash, sniff"] += c1 - c0
            continue
        doc = engine.parse(data, str(path))
        c2 = time.process_time()
        rep = engine.report(doc, rules)
        c3 = time.process_time()
        out = fleet_work._prepare(fleet_work.Outcome(str(path), log_hash=digest), rep)
        c4 = time.process_time()
        outcomes.append(out)
        for name, a, b in (
            ("read, hash, sniff", c0, c1),
            ("parse", c1, c2),
            ("rules", c2, c3),
            ("prepare", c3, c4),
        ):
            spent[name] += b - a
    store = Store(work / "stages.db")
    c0 = time.process_time()
    merge(store, outcomes, recount=True)
    spent["store"] = time.process_time() - c0
    store.close()
    return spent


def pool_split(logs: list[Path], work: Path, jobs: int = 2) -> tuple[float, float, float]:
    """(CPU seconds of this process, of its pool workers, wall seconds) of diagnosing the logs
    on a pool of ``jobs`` and merging them into a fresh store: what the one process that
    writes the store spends beside its workers."""
    from tracelens.fleet.pool import diagnose_all, merge
    from tracelens.fleet.work import Settings
    from tracelens.incidents.store import Store
    from tracelens.rulebook.load import default_rules

    default_rules(())  # as the command loads them before forking
    store = Store(work / "pool.db")
    self0, kids0 = resource.getrusage(resource.RUSAGE_SELF), children_cpu()
    t0 = time.perf_counter()
    merge(store, diagnose_all([str(p) for p in logs], Settings(), jobs), recount=True)
    wall = time.perf_counter() - t0
    self1 = resource.getrusage(resource.RUSAGE_SELF)
    store.close()
    own = self1.ru_utime + self1.ru_stime - self0.ru_utime - self0.ru_stime
    return own, children_cpu() - kids0, wall


def ray_curve(logs: list[Path], cores: int, repeat: int) -> list[tuple[int, float]]:
    """(workers, best wall seconds) of the Ray Data map alone over the logs, on a local Ray
    started once with every core (start-up not counted)."""
    import logging

    import ray

    from tracelens.fleet.raydata import diagnose_all
    from tracelens.fleet.work import Settings

    ray.init(num_cpus=cores, include_dashboard=False, logging_level=logging.ERROR)
    items = [(str(p), str(p)) for p in logs]
    out = []
    try:
        for workers in sorted({1, 2, cores}):
            best = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                n = sum(1 for _ in diagnose_all(items, Settings(), workers))
                best = min(best, time.perf_counter() - t0)
                assert n == len(items)
            out.append((workers, best))
    finally:
        ray.shutdown()
    return out


def ray_start(repeat: int) -> float:
    """Best wall seconds to start local Ray and shut it down, in a fresh process."""
    code = "import ray; ray.init(include_dashboard=False, logging_level=40); ray.shutdown()"
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
        best = min(best, time.perf_counter() - t0)
    return best


def profile(count: int) -> None:
    """A cProfile of the stages, one log at a time in this process, sorted by own time."""
    import cProfile
    import pstats

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = work / "logs"
        folder.mkdir()
        logs = make_logs(folder, count)
        prof = cProfile.Profile()
        prof.enable()
        stages(logs, work)
        prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(45)


def _counted(folder: Path, step: int) -> None:
    """Under callgrind: one pass over every ``step``-th log, the counters zeroed, a second pass,
    the counters dumped."""
    from tracelens.fleet import work as fleet_work

    fleet_work.setup(fleet_work.Settings())
    data = [(str(p), p.read_bytes()) for p in sorted(folder.iterdir())][::step]
    pid = str(os.getpid())
    for k in range(2):
        if k:
            subprocess.run(["callgrind_control", "-z", pid], capture_output=True, check=False)
        for source, blob in data:
            fleet_work.diagnose_data(blob, source)
    subprocess.run(["callgrind_control", "-d", pid], capture_output=True, check=False)


def _pool_counted(folder: Path, jobs: int, db: str) -> None:
    """Under callgrind, children traced: ``tracelens ingest FOLDER --recount --jobs N``, each
    pool worker's counters zeroed as it starts (callgrind gives a forked child a copy of its
    parent's counters: without this, what the parent did before the fork would count again in
    every worker)."""
    from tracelens.cli import main as cli_main
    from tracelens.fleet import pool, work

    setup = work.setup

    def zeroed(settings: work.Settings) -> None:
        subprocess.run(["callgrind_control", "-z", str(os.getpid())], capture_output=True)
        setup(settings)

    pool.setup = zeroed  # type: ignore[assignment] (the pool's initializer)
    cli_main(["ingest", str(folder), "--recount", "--jobs", str(jobs), "--db", db])


def pool_instructions(count: int, step: int, jobs: int) -> None:
    """Instructions of the whole ``ingest --jobs N`` command over every ``step``-th of
    ``count`` logs: the parent (start-up, rules, store, merge) and each worker from its start."""
    if shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind (callgrind)")
    compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = work / "logs"
        folder.mkdir()
        for path in make_logs(folder, count)[::-1]:
            if int(path.name[:5]) % step:
                path.unlink()
        cmd = ["valgrind", "--tool=callgrind", "--trace-children=yes"]
        cmd += ["--trace-children-skip=*callgrind_control*,*perl*"]
        cmd += [f"--callgrind-out-file={work}/callgrind.%p"]
        cmd += [sys.executable, __file__, "--_pool", str(folder), "--jobs", str(jobs)]
        cmd += ["--_db", str(work / "pool.db")]
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        counts = [
            int(line.split()[1])
            for dump in sorted(work.glob("callgrind.*"))
            for line in dump.read_text().splitlines()
            if line.startswith("summary:")
        ]
        if p.returncode != 0 or not counts:
            sys.exit(f"callgrind failed ({p.returncode}): {p.stderr.strip()[-500:]}")
        logs = len(list(folder.iterdir()))
        print(
            f"ingest --jobs {jobs} of {logs} logs, every process: {sum(counts) / 1e6:,.1f} M "
            f"instructions ({', '.join(f'{n / 1e6:,.1f}' for n in counts)} M by process)"
        )


def instructions(count: int, step: int) -> None:
    """Instructions of the second pass over every ``step``-th of ``count`` logs."""
    if shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind (callgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = work / "logs"
        folder.mkdir()
        make_logs(folder, count)
        out = work / "callgrind.out"
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        cmd += [sys.executable, __file__, "--_counted", str(folder), "--step", str(step)]
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        dumps = sorted(work.glob("callgrind.out.*"))
        if p.returncode != 0 or not dumps:
            sys.exit(f"callgrind failed ({p.returncode}): {p.stderr.strip()[-500:]}")
        total = next(
            int(line.split()[1])
            for line in dumps[-1].read_text().splitlines()
            if line.startswith("summary:")
        )
        logs = len(sorted(folder.iterdir())[::step])
        print(
            f"{logs} logs, second pass: {total / 1e6:,.1f} M instructions ({total / logs / 1e6:.2f} M a log)"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ray", action="store_true", help="also on local Ray (the ray extra)")
    ap.add_argument(
        "--profile", action="store_true", help="only a cProfile of the stages (by own time)"
    )
    ap.add_argument(
        "--stages-only", action="store_true", help="only the stages, not the ingest commands"
    )
    ap.add_argument(
        "--instructions", action="store_true", help="only the instructions of the loop (callgrind)"
    )
    ap.add_argument("--step", type=int, default=10, help="with --instructions: every Nth log")
    ap.add_argument(
        "--jobs",
        type=int,
        default=0,
        help="with --instructions: count the whole ingest --jobs N command instead of the loop",
    )
    ap.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="DIR",
        help="only --jobs 2 of this tree and of another source tree, interleaved (repeatable)",
    )
    ap.add_argument("--_counted", help=argparse.SUPPRESS)
    ap.add_argument("--_pool", help=argparse.SUPPRESS)
    ap.add_argument("--_db", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts._counted:
        _counted(Path(opts._counted), opts.step)
        return
    if opts._pool:
        _pool_counted(Path(opts._pool), opts.jobs, opts._db)
        return
    if opts.instructions and opts.jobs:
        pool_instructions(opts.logs, opts.step, opts.jobs)
        return
    if opts.instructions:
        instructions(opts.logs, opts.step)
        return
    if opts.profile:
        profile(opts.logs)
        return
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {cores} cores")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = work / "logs"
        folder.mkdir()
        logs = make_logs(folder, opts.logs)
        size = sum(p.stat().st_size for p in logs)
        print(f"{len(logs)} logs, {size / 1e6:.1f} MB (mean {size / len(logs) / 1e3:.1f} KB)")
        if opts.tree:
            print(f"bytecode compiled first: {compile_bytecode()}")
            interleaved(folder, work, opts.repeat, opts.tree, len(logs))
            print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            return
        configs = [("--jobs 1", ["--jobs", "1"]), ("--jobs 2", ["--jobs", "2"])]
        if opts.ray:
            configs += [
                ("--ray --jobs 1", ["--ray", "--jobs", "1"]),
                ("--ray --jobs 2", ["--ray", "--jobs", "2"]),
                (f"--ray (all {cores} cores)", ["--ray"]),
            ]
        if not opts.stages_only:
            print(f"bytecode compiled first: {compile_bytecode()}")
        print(f"best of {opts.repeat}:")
        for name, args in [] if opts.stages_only else configs:
            wall, cpu, summary = run(args, folder, work, opts.repeat)
            print(
                f"  {name:22} {len(logs) / wall:7.1f} logs/s  wall {wall:6.2f} s  "
                f"cpu {cpu:6.2f} s ({1000 * cpu / len(logs):.2f} ms/log)   "
                f"({summary.split(' (')[0]})"
            )
        if opts.ray and not opts.stages_only:
            print(f"  local Ray start and shutdown alone: {ray_start(opts.repeat):.2f} s")
            print("Ray Data map alone (Ray already started), best of", opts.repeat)
            for workers, wall in ray_curve(logs, cores or 1, opts.repeat):
                print(f"  {workers} worker(s) {len(logs) / wall:7.1f} logs/s  wall {wall:6.2f} s")
        if opts.stages_only:
            own, kids, wall = pool_split(logs, work)
            print(
                f"pool of 2: this process {own:.2f} s CPU, workers {kids:.2f} s, wall {wall:.2f} s"
            )
        spent = stages(logs, work)
        total = sum(spent.values())
        print(f"stages, one process, CPU seconds over {len(logs)} logs ({total:.2f} s in all):")
        for name, sec in spent.items():
            print(
                f"  {name:18} {sec:6.2f} s  {1000 * sec / len(logs):6.2f} ms/log  {sec / total:5.1%}"
            )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

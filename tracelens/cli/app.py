"""The command line's root: the ``tracelens`` group, what every command shares, and the
process entry point :func:`main`. The commands live one module per group beside it.

Exit codes: 0 the analysis ran; 1 ``--fail-on`` found a diagnosis at or above the severity,
or ``rules lint``/``rules test`` found problems; 2 usage or unreadable input (one line on
stderr), or an environment failure: a database that is read-only, full or damaged, a
closed or full standard stream, a file that cannot be written (one line on stderr); 3 a bug
in tracelens.
"""

from __future__ import annotations

import gc
import os
import sys

import click

from tracelens import __version__
from tracelens.models import SEVERITY_RANK

SEVERITY_ORDER = SEVERITY_RANK
DIRECTORY = click.Path(file_okay=False)
FILE = click.Path(dir_okay=False)
ANY_PATH = click.Path()
INCIDENT_ID = click.IntRange(1, 2**63 - 1)
"""An incident number: a positive SQLite integer (64 bits)."""
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Failure(click.ClickException):
    """A one-line error on stderr, ``tracelens: MESSAGE``; exit 2."""

    exit_code = 2

    def show(self, file=None) -> None:  # noqa: D102
        click.echo(f"tracelens: {self.message}", err=True)


class HelpGroup(click.Group):
    """A command group that, run with nothing after it, prints its help (exit 0) instead of
    a usage error."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args:
            click.echo(ctx.get_help())
            ctx.exit(0)
        return super().parse_args(ctx, args)


class RootGroup(HelpGroup):
    """The root group: each command is imported from its module when it is first needed (click's
    "lazily loading subcommands"), so a run pays for the imports of its own command only."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, str] = {}

    def add_lazy(self, name: str, target: str) -> None:
        """Register ``name`` as ``"package.module:attribute"``, imported on first use."""
        self.lazy[name] = target

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            import importlib

            module, attr = self.lazy[cmd_name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return self.commands.get(cmd_name)


def long_running() -> None:
    """Called by commands that run long or handle many logs: collect cycles as usual."""
    gc.enable()


def echo(message: str = "", err: bool = False, nl: bool = True, keep_ansi: bool = False) -> None:
    """Write a line to stdout (or stderr). Terminal escape sequences are dropped when the
    stream is not a terminal, unless ``keep_ansi`` (colours that were asked for)."""
    click.echo(message, err=err, nl=nl, color=True if keep_ansi else None)


def is_environment_failure(exc: BaseException) -> bool:
    """A failure of the machine rather than of tracelens: a full disk, a read-only or damaged
    database, a closed stream (sqlite3 is not imported for this: most runs never load it)."""
    return isinstance(exc, OSError) or type(exc).__module__ == "sqlite3"


def environment_message(exc: BaseException) -> str:
    """One line for an environment failure."""
    if type(exc).__module__ == "sqlite3":
        return f"incident database: {exc}"
    if isinstance(exc, OSError):
        what = exc.strerror or str(exc) or type(exc).__name__
        return f"{exc.filename}: {what}" if exc.filename else f"cannot read or write: {what}"
    return str(exc)


def echo_safe(message: str) -> None:
    """A line on stderr that never raises (stderr itself may be closed or full)."""
    try:
        click.echo(message, err=True)
    except (OSError, ValueError, AttributeError):
        pass


def quiet_stdout() -> None:
    """The reader of stdout went away (``| head``): send what is left to /dev/null, so that
    neither the rest of the output nor the final flush raises again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def did_you_mean(word: str, choices: list[str]) -> str:
    """``; did you mean 'x' or 'y'?`` for the closest choices (by edit distance, or the ones
    that contain ``word``), else ``""``."""
    from rapidfuzz import fuzz, process

    close = [c for c in choices if word and word in c][:3]
    if not close:
        close = [
            c
            for c, score, _ in process.extract(word, choices, scorer=fuzz.ratio, limit=3)
            if score >= 70
        ]
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def check_category(category: str | None) -> None:
    """A one-line error, with the closest names, for a category no rule may use."""
    from tracelens.rulebook.load import categories

    if category is not None and category not in categories():
        close = did_you_mean(category, sorted(categories()))
        raise Failure(f"unknown category {category!r}{close} (see rules/categories.yaml)")


def rules_option(f):
    return click.option(
        "--rules",
        "rules_dirs",
        multiple=True,
        type=DIRECTORY,
        help="Extra rules directory (repeatable); also TRACELENS_RULES.",
    )(f)


def db_option(f):
    return click.option(
        "--db",
        "db_path",
        type=FILE,
        default=None,
        help="Incident database (default: TRACELENS_DB, else the user data dir).",
    )(f)


def redact_options(f):
    f = click.option(
        "--no-redact", is_flag=True, help="Store and export the log text as is (secrets included)."
    )(f)
    f = click.option(
        "--redact-regex",
        "redact_regex",
        multiple=True,
        help="Also redact matches of this regex (repeatable).",
    )(f)
    return f


def open_store(db_path: str | None, create: bool = True):
    from tracelens.incidents.store import Store, StoreError

    try:
        return Store(db_path, create=create)
    except StoreError as exc:
        raise Failure(str(exc)) from None


def make_redactor(redact_regex: tuple[str, ...], no_redact: bool):
    from tracelens.incidents.redact import Redactor

    try:
        return Redactor(redact_regex, enabled=not no_redact)
    except ValueError as exc:
        raise Failure(str(exc)) from None


def _load_rules(rules_dirs: tuple[str, ...]):
    from tracelens.rulebook.load import default_rules
    from tracelens.rulebook.model import RuleError

    try:
        return default_rules(tuple(rules_dirs))
    except RuleError as exc:
        raise Failure(str(exc)) from None


def _open(path: str):
    """Open the log and, when it is large, start scanning it in worker processes right away
    (before the heavier imports): (opened file, prefetch) or a one-line Failure."""
    from tracelens.read.prescan import take
    from tracelens.read.scan import SCANSET, InputError, open_input, start_scan

    if path == "-" and (sys.stdin is None or sys.stdin.isatty()):
        raise Failure("no log given: pass a FILE, or pipe a log into 'tracelens diagnose -'")
    started = take(path, SCANSET)  # the scan the process started before parsing its arguments
    if started is not None:
        return started
    try:
        opened = open_input(path)
    except InputError as exc:
        raise Failure(str(exc)) from None
    return opened, (start_scan(opened[0]) if path != "-" else None)


def _read(path: str, early=None):
    from tracelens.engine import parse_path
    from tracelens.read.scan import InputError

    opened, prefetch = early if early is not None else _open(path)
    try:
        return parse_path(path, opened, prefetch)
    except InputError as exc:
        raise Failure(str(exc)) from None
    finally:
        if prefetch is not None:
            prefetch.close()


@click.group(cls=RootGroup, context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="tracelens")
def cli() -> None:
    """tracelens: root causes for LLM-serving and PyTorch/CUDA/NCCL crash logs.

    Example:

        kubectl logs pod/vllm-0 | tracelens diagnose -
    """


def main(argv: list[str] | None = None) -> int:
    """Console entry point: never shows a traceback of tracelens itself."""
    # tracelens uses no pydantic plugins; looking them up scans every installed package's
    # metadata on start-up
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if sys.stdout is None:  # started with stdout closed: nowhere to put a result
        print("tracelens: standard output is closed", file=sys.stderr or sys.__stderr__)
        return 2
    try:
        try:
            cli.main(
                args=sys.argv[1:] if argv is None else list(argv),
                prog_name="tracelens",
                standalone_mode=False,
            )
        except (EOFError, KeyboardInterrupt, click.exceptions.Abort):
            echo(err=True)
            echo("tracelens: aborted", err=True)
            return 130
    except click.UsageError as exc:  # usage errors name the command's help; failures are one line
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        echo(f"tracelens: {exc.format_message()}{hint}", err=True)
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) or exc.code is None else 1
    except BrokenPipeError:
        quiet_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if is_environment_failure(exc):  # the machine, not tracelens: one line, exit 2
            echo_safe(f"tracelens: {environment_message(exc)}")
            return 2
        if os.environ.get("TRACELENS_DEBUG"):
            raise
        # a bug in tracelens: one line, not a traceback
        echo_safe(f"tracelens: internal error: {type(exc).__name__}: {exc}")
        return 3
    return 0

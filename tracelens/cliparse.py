"""The command tree of ``tracelens`` on the standard library's argparse.

Commands are declared with decorators (``group``, ``Group.command``, ``Group.group``,
``argument``, ``option``) and become argparse parsers: one command's parser when it runs,
the whole tree (``Group.build_parser``) for the reference (``clidoc``). The command line reads
as it always has: options and arguments in any order, ``--option=value``, an option's value
taken as given even when it starts with ``-``, ``--`` ends the options, a group stops at its
first command name, no abbreviated options. A usage error is one line naming the command's
help; a help page is the usage, the docstring (indented paragraphs such as examples kept as
written), the options with their metavars and defaults, and a group's commands.

Nothing here is imported that a plain run does not need: textwrap and shutil only for a help
page, difflib only for a misspelt option or command.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys

HELP_WIDTH_MAX = 80  # a help page is as wide as the terminal, at most this (less 2)


class CliError(Exception):
    """An error shown as one line on stderr, ``tracelens: MESSAGE``; exit 2. With a parser,
    the line ends with a pointer to that command's help."""

    exit_code = 2

    def __init__(self, message: str, parser: Parser | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.parser = parser

    def line(self) -> str:
        hint = f" (see '{self.parser.prog} --help')" if self.parser is not None else ""
        return f"tracelens: {self.message}{hint}"


class UsageError(CliError):
    """The command line itself is wrong."""


# --- output -------------------------------------------------------------------------------


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\033\[[0-?]*[ -/]*[@-~]", "", text)


def echo(message: str = "", err: bool = False, nl: bool = True, keep_ansi: bool = False) -> None:
    """Write a line to stdout (or stderr) and flush it. Terminal escape sequences are dropped
    when the stream is not a terminal, unless ``keep_ansi`` (colours that were asked for)."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    text = f"{message}\n" if nl else str(message)
    if "\033" in text and not keep_ansi and not _isatty(stream):
        text = _strip_ansi(text)
    stream.write(text)
    stream.flush()


def quiet_stdout() -> None:
    """The reader of stdout went away (``| head``): send what is left to /dev/null, so that
    neither the rest of the output nor the final flush raises again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


class Progress:
    """``with Progress(items, "label") as bar: for x in bar:`` — on a terminal (stderr) a line
    ``label  [#####-----]  3/12`` redrawn in place; elsewhere the label alone, once."""

    WIDTH = 36

    def __init__(self, items, label: str) -> None:
        self.items = list(items)
        self.label = label
        self.tty = _isatty(sys.stderr)

    def _draw(self, pos: int) -> None:
        n = len(self.items)
        fill = int(pos / (n or 1) * self.WIDTH) if n else 0
        bar = "#" * fill + "-" * (self.WIDTH - fill)
        sys.stderr.write(f"\r{self.label}  [{bar}]  {pos}/{n}")
        sys.stderr.flush()

    def __enter__(self):
        if self.tty:
            self._draw(0)
        else:
            echo(self.label, err=True)
        return self

    def __iter__(self):
        for pos, item in enumerate(self.items, 1):
            yield item
            if self.tty:
                self._draw(pos)

    def __exit__(self, *exc) -> None:
        if self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()


# --- parameter types ----------------------------------------------------------------------


class _Invalid(Exception):
    """A value its type refuses; becomes ``Invalid value for 'PARAM': MESSAGE``."""


class ParamType:
    name = "text"

    @property
    def metavar(self) -> str:
        return self.name.upper()

    def convert(self, value: str):
        return value


class Choice(ParamType):
    def __init__(self, choices) -> None:
        self.choices = tuple(choices)

    @property
    def metavar(self) -> str:
        return "[" + "|".join(self.choices) + "]"

    def convert(self, value: str):
        if value in self.choices:
            return value
        raise _Invalid(f"{value!r} is not one of {', '.join(map(repr, self.choices))}.")


class _Number(ParamType):
    def __init__(self, name: str, cls) -> None:
        self.name, self.cls = name, cls

    def convert(self, value: str):
        try:
            return self.cls(value)
        except ValueError:
            raise _Invalid(f"{value!r} is not a valid {self.name}.") from None


INT = _Number("integer", int)
FLOAT = _Number("float", float)


class PathType(ParamType):
    """A path that need not exist; when it does, it must be of the right kind and readable."""

    def __init__(self, file_okay: bool = True, dir_okay: bool = True) -> None:
        self.file_okay, self.dir_okay = file_okay, dir_okay
        self.name = "file" if not dir_okay else "directory" if not file_okay else "path"

    def convert(self, value: str):
        try:
            st = os.stat(value)
        except OSError:
            return value
        what = self.name.title()
        if not self.file_okay and stat.S_ISREG(st.st_mode):
            raise _Invalid(f"{what} {value!r} is a file.")
        if not self.dir_okay and stat.S_ISDIR(st.st_mode):
            raise _Invalid(f"{what} {value!r} is a directory.")
        if not os.access(value, os.R_OK):
            raise _Invalid(f"{what} {value!r} is not readable.")
        return value


_TYPES = {None: ParamType(), str: ParamType(), int: INT, float: FLOAT}


class _Convert:
    """argparse's ``type=`` for one parameter of one parser: converts, or raises the usage
    error naming the parameter (argparse lets any other exception through)."""

    def __init__(self, ptype: ParamType, hint: str, parser: Parser) -> None:
        self.ptype, self.hint, self.parser = ptype, hint, parser

    def __call__(self, value: str):
        try:
            return self.ptype.convert(value)
        except _Invalid as exc:
            raise UsageError(f"Invalid value for {self.hint}: {exc}", self.parser) from None


# --- declarations -------------------------------------------------------------------------


class Param:
    """An argument or an option as declared; ``add_to`` makes it an argparse action."""

    def __init__(self, decls, *, positional: bool, type=None, default=None, required=None,
                 nargs: int = 1, multiple: bool = False, is_flag: bool = False,
                 help: str | None = None, show_default: bool = False,
                 metavar: str | None = None) -> None:
        self.positional = positional
        self.type = type if isinstance(type, ParamType) else _TYPES[type]
        self.default, self.nargs, self.multiple = default, nargs, multiple
        self.help, self.show_default = help, show_default
        self.opts: list[str] = []
        self.secondary: list[str] = []
        name = None
        if positional:
            (name,) = decls
        else:
            for decl in decls:
                if not decl.startswith("-"):
                    name = decl
                elif "/" in decl:
                    first, second = (s.strip() for s in decl.split("/", 1))
                    self.opts.append(first)
                    self.secondary.append(second)
                else:
                    self.opts.append(decl)
            if name is None:
                longs = [o for o in self.opts if o.startswith("--")] or self.opts
                name = longs[0].lstrip("-").replace("-", "_")
        self.name = name
        self.is_flag = is_flag or bool(self.secondary)
        if required is None:  # an argument is required unless it has a default or takes any number
            required = positional and default is None and nargs > 0
        self.required = required
        if positional:
            if metavar is None:
                metavar = name.upper() if required else f"[{name.upper()}]"
                metavar += "..." if nargs != 1 else ""
            self.metavar = metavar
        else:
            self.metavar = metavar or self.type.metavar

    def error_hint(self) -> str:
        return " / ".join(f"'{o}'" for o in self.opts) if self.opts else f"'{self.metavar}'"

    def add_to(self, parser: Parser) -> argparse.Action:
        kw: dict = {"help": self.help}
        if type(self.type) is not ParamType:
            kw["type"] = _Convert(self.type, self.error_hint(), parser)
        if self.positional:
            kw["metavar"] = self.metavar
            if self.nargs == -1:
                kw["nargs"] = "+" if self.required else "*"
            elif not self.required:
                kw["nargs"] = "?"
                kw["default"] = self.default
            action = parser.add_argument(self.name, **kw)
        elif self.is_flag:
            kw.pop("type", None)
            if self.secondary:
                action = parser.add_argument(*self.opts, *self.secondary, dest=self.name,
                                             action=_BoolPair, default=self.default, **kw)
            else:
                action = parser.add_argument(*self.opts, dest=self.name, action="store_true", **kw)
        else:
            action = parser.add_argument(*self.opts, dest=self.name, metavar=self.metavar,
                                         action="append" if self.multiple else "store",
                                         default=None if self.multiple else self.default, **kw)
        action.param = self
        return action


class _BoolPair(argparse.Action):
    """``--color/--no-color``: one destination, True or False, None when neither is given."""

    def __init__(self, option_strings, dest, default=None, help=None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)
        self.true_opts = option_strings[: len(option_strings) // 2]

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, option_string in self.true_opts)


def _params(f) -> list[Param]:
    if not hasattr(f, "__tracelens_params__"):
        f.__tracelens_params__ = []
    return f.__tracelens_params__


def argument(name: str, **attrs):
    """Declare a positional argument (decorators apply bottom-up: the top one comes first)."""

    def deco(f):
        _params(f).insert(0, Param((name,), positional=True, **attrs))
        return f

    return deco


def option(*decls: str, **attrs):
    """Declare an option: ``"--name"``, ``"-n"``, ``"--flag/--no-flag"``, and a bare word for
    the parameter's name when it is not the long option's."""

    def deco(f):
        _params(f).insert(0, Param(decls, positional=False, **attrs))
        return f

    return deco


def cleandoc(doc: str) -> str:
    """A docstring without its indentation (as ``inspect.cleandoc``, without importing it)."""
    lines = doc.expandtabs().split("\n")
    margin = min((len(l) - len(l.lstrip()) for l in lines[1:] if l.strip()), default=0)
    lines = [lines[0].lstrip()] + [l[margin:] for l in lines[1:]]
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are :class:`UsageError` and whose help page keeps the
    command's layout."""

    node: Command
    actions_in_order: list[argparse.Action]
    commands_action: argparse.Action | None = None

    def error(self, message: str):
        prefix = "the following arguments are required: "
        if message.startswith(prefix):  # the first missing one, as the command names it
            message = f"Missing argument '{message[len(prefix):].split(', ')[0]}'."
        else:
            message = message[:1].upper() + message[1:] + ("" if message.endswith(".") else ".")
        raise UsageError(message, self)

    def _get_formatter(self):  # for argparse's own checks: a fixed width, no terminal query
        return argparse.HelpFormatter(self.prog, width=HELP_WIDTH_MAX)

    def format_help(self) -> str:
        return help_page(self) + "\n"

    def format_usage(self) -> str:
        return help_page(self).split("\n", 1)[0] + "\n"

    def subcommands(self) -> dict[str, Parser]:
        """The parsers of this group's commands, by name (empty for a command)."""
        return dict(self.commands_action.choices) if self.commands_action is not None else {}


class Command:
    def __init__(self, name: str, func) -> None:
        self.name = name
        self.func = func
        self.params: list[Param] = list(getattr(func, "__tracelens_params__", []))
        self.doc = cleandoc(func.__doc__ or "")
        self.version: str | None = None

    def _fill(self, parser: Parser) -> Parser:
        parser.node = self
        parser.actions_in_order = [p.add_to(parser) for p in self.params]
        if self.version is not None:
            a = parser.add_argument("--version", action="version", version=self.version,
                                    help="Show the version and exit.")
            a.role = "version"
            parser.actions_in_order.append(a)
        a = parser.add_argument("-h", "--help", action="help", help="Show this message and exit.")
        a.role = "help"
        parser.actions_in_order.append(a)
        return parser

    def make_parser(self, prog: str, subparsers=None, with_commands: bool = True) -> Parser:
        kw = {"prog": prog, "description": self.doc, "add_help": False, "allow_abbrev": False}
        if subparsers is None:
            parser = Parser(**kw)
        else:
            parser = subparsers.add_parser(self.name, help=self.doc.split("\n", 1)[0], **kw)
        return self._fill(parser)

    def run(self, parser: Parser, tokens: list[str]) -> None:
        given, positionals = _scan(parser, tokens, interspersed=True)
        if any(getattr(a, "role", None) == "help" for a, _o, _v in given):
            echo(parser.format_help(), nl=False)
            return
        argv: list[str] = []
        for action, opt, value in given:
            if action.nargs == 0:
                argv.append(opt if opt.startswith("--") else _long(action))
            else:
                argv.append(f"{_long(action)}={value}")
        if positionals:
            argv += ["--", *positionals]
        ns, extra = parser.parse_known_args(argv)
        if extra[:1] == ["--"]:
            extra = extra[1:]
        if extra:
            s = "s" if len(extra) > 1 else ""
            raise UsageError(f"Got unexpected extra argument{s} ({' '.join(extra)})", parser)
        kwargs = {}
        for p in self.params:
            value = getattr(ns, p.name)
            if p.multiple or p.nargs == -1:
                value = tuple(value or ())
            kwargs[p.name] = value
        self.func(**kwargs)


class Group(Command):
    def __init__(self, name: str, func, version: str | None = None) -> None:
        super().__init__(name, func)
        self.version = version
        self.commands: dict[str, Command] = {}

    def _add(self, kind: type, name: str | None):
        """A decorator that registers its function as a subcommand of this group."""

        def deco(f):
            cmd = kind(name or f.__name__.replace("_", "-"), f)
            self.commands[cmd.name] = cmd
            return cmd

        return deco

    def command(self, name: str | None = None):
        return self._add(Command, name)

    def group(self, name: str | None = None):
        return self._add(Group, name)

    def make_parser(self, prog: str, subparsers=None, with_commands: bool = True) -> Parser:
        parser = super().make_parser(prog, subparsers)
        if with_commands:
            sub = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command",
                                        prog=prog, parser_class=Parser)
            parser.commands_action = sub
            for name in sorted(self.commands):
                self.commands[name].make_parser(f"{prog} {name}", sub)
        return parser

    def build_parser(self) -> Parser:
        """The whole command tree as argparse parsers."""
        return self.make_parser(self.name)

    def main(self, argv: list[str]) -> None:
        """Run the command the arguments name."""
        node, prog, tokens = self, self.name, list(argv)
        while isinstance(node, Group):
            parser = node.make_parser(prog, with_commands=False)
            if not tokens:  # a group given nothing shows its help (on stdout, exit 0, like --help)
                echo(node.make_parser(prog).format_help(), nl=False)
                return
            given, rest = _scan(parser, tokens, interspersed=False)
            for action, _opt, _value in given:
                if getattr(action, "role", None) == "help":
                    echo(node.make_parser(prog).format_help(), nl=False)
                    return
                if getattr(action, "role", None) == "version":
                    echo(f"{self.name}, version {action.version}")
                    return
            if not rest:
                raise UsageError("Missing command.", parser)
            name, tokens = rest[0], rest[1:]
            if name not in node.commands:
                close = _did_you_mean(name, node.commands)
                raise UsageError(f"No such command {name!r}.{close}", parser)
            node, prog = node.commands[name], f"{prog} {name}"
        node.run(node.make_parser(prog), tokens)


def group(name: str, version: str | None = None):
    """The root of a command tree: ``@group("tracelens", version=...)`` on a function whose
    docstring is the program's help."""

    def deco(f) -> Group:
        return Group(name, f, version)

    return deco


# --- reading the command line -------------------------------------------------------------


def _long(action: argparse.Action) -> str:
    return next(o for o in action.option_strings if o.startswith("--"))


def _did_you_mean(name: str, possibilities) -> str:
    from difflib import get_close_matches

    close = sorted(get_close_matches(name, list(possibilities)))
    if not close:
        return ""
    listed = ", ".join(map(repr, close))
    return f" Did you mean {listed}?" if len(close) == 1 else f" (Did you mean one of: {listed}?)"


def _scan(parser: Parser, tokens: list[str], interspersed: bool):
    """Split one command's tokens into ``[(action, option as written, value)]`` and its
    positional arguments. An option's value is the rest after ``=``, the rest of a short
    option's token, or else the next token whatever it is; ``--`` ends the options; a group
    (not ``interspersed``) stops at its first positional argument, its command's name."""
    longs: dict[str, argparse.Action] = {}
    shorts: dict[str, argparse.Action] = {}
    for action in parser.actions_in_order:
        for o in action.option_strings:
            (longs if o.startswith("--") or len(o) > 2 else shorts)[o] = action
    given: list[tuple[argparse.Action, str, str | None]] = []
    positionals: list[str] = []
    i = 0

    def value_for(name: str) -> str:
        nonlocal i
        if i >= len(tokens):
            raise UsageError(f"Option {name!r} requires an argument.")
        i += 1
        return tokens[i - 1]

    while i < len(tokens):
        arg = tokens[i]
        i += 1
        if arg == "--":
            positionals += tokens[i:]
            break
        if not (arg.startswith("-") and len(arg) > 1):
            if not interspersed:
                positionals += tokens[i - 1 :]
                break
            positionals.append(arg)
            continue
        name, eq, explicit = arg.partition("=")
        action = longs.get(name)
        if action is not None:
            if action.nargs != 0:
                given.append((action, name, explicit if eq else value_for(name)))
            elif eq:
                raise UsageError(f"Option {name!r} does not take a value.")
            else:
                given.append((action, name, None))
            continue
        if arg.startswith("--"):
            raise UsageError(f"No such option {name!r}.{_did_you_mean(name, longs)}", parser)
        for k in range(1, len(arg)):  # short options, possibly grouped: -ab, -oFILE
            opt = "-" + arg[k]
            action = shorts.get(opt)
            if action is None:
                raise UsageError(f"No such option {opt!r}.", parser)
            if action.nargs != 0:
                rest = arg[k + 1 :]
                given.append((action, opt, rest if rest else value_for(opt)))
                break
            given.append((action, opt, None))
    return given, positionals


# --- help pages ---------------------------------------------------------------------------


def _terminal_width() -> int:
    import shutil

    return max(min(shutil.get_terminal_size().columns, HELP_WIDTH_MAX) - 2, 50)


def _wrap(text: str, width: int, initial: str = "", subsequent: str = "",
          paragraphs: bool = False) -> str:
    """Rewrap text; with ``paragraphs``, each paragraph (blank-line separated) on its own,
    keeping the indentation of its first line (so an indented example stays indented)."""
    import textwrap

    text = text.expandtabs()
    if not paragraphs:
        return textwrap.TextWrapper(width, initial_indent=initial, subsequent_indent=subsequent,
                                    replace_whitespace=False).fill(text)
    pars: list[tuple[int, str]] = []
    buf: list[str] = []
    indent = None
    for line in text.splitlines() + [""]:
        if not line:
            if buf:
                pars.append((indent or 0, " ".join(buf)))
            buf, indent = [], None
            continue
        if indent is None:
            stripped = line.lstrip()
            indent = len(line) - len(stripped)
            line = stripped
        buf.append(line)
    out = []
    for ind, par in pars:
        pad = " " * ind
        out.append(textwrap.TextWrapper(width, initial_indent=initial + pad,
                                        subsequent_indent=subsequent + pad,
                                        replace_whitespace=False).fill(par))
    return "\n\n".join(out)


def _definitions(rows: list[tuple[str, str]], width: int, indent: int = 2) -> list[str]:
    """Two columns: terms (at most 30 wide, else the text starts on the next line) and
    their text, rewrapped."""
    first = min(max(len(a) for a, _b in rows), 30) + 2
    out = []
    for term, text in rows:
        line = " " * indent + term
        if not text:
            out.append(line + "\n")
            continue
        if len(term) <= first - 2:
            line += " " * (first - len(term))
        else:
            line += "\n" + " " * (first + indent)
        lines = _wrap(text, max(width - first - 2, 10), paragraphs=True).splitlines()
        if lines:
            out.append(line + lines[0] + "\n")
            out += [" " * (first + indent) + l + "\n" for l in lines[1:]]
        else:
            out.append(line + "\n")
    return out


def short_help(doc: str, limit: int) -> str:
    """A command's line in its group's list: its first sentence, shortened to ``limit``."""
    words = doc.partition("\n\n")[0].split()
    if not words:
        return ""
    for k, word in enumerate(words):
        if word.endswith(".") and (k == len(words) - 1 or not words[k + 1][0].islower()):
            words = words[: k + 1]
            break
    text = " ".join(words)
    if len(text) <= limit:
        return text
    import textwrap

    return textwrap.shorten(text, limit, placeholder="...", break_on_hyphens=False)


def _option_row(action: argparse.Action) -> tuple[str, str]:
    def spell(opts: list[str]) -> str:
        s = ", ".join(sorted(opts, key=lambda o: len(o) - len(o.lstrip("-"))))
        return s if action.nargs == 0 else f"{s} {action.metavar}"

    if isinstance(action, _BoolPair):
        n = len(action.option_strings) // 2
        spec = f"{spell(action.option_strings[:n])} / {spell(action.option_strings[n:])}"
    else:
        spec = spell(list(action.option_strings))
    text = action.help or ""
    param = getattr(action, "param", None)
    if param is not None and param.show_default and action.default is not None:
        extra = f"[default: {action.default}]"
        text = f"{text}  {extra}" if text else extra
    return spec, text


def help_page(parser: Parser, width: int | None = None) -> str:
    """The help page of a command or group, ``width`` columns (default: the terminal's, at
    most 78)."""
    if width is None:
        width = _terminal_width()
    node = parser.node
    pieces = ["[OPTIONS]"] + [a.metavar for a in parser.actions_in_order if not a.option_strings]
    if isinstance(node, Group):
        pieces.append("COMMAND [ARGS]...")
    prefix = f"Usage: {parser.prog} "
    if width >= len(prefix) + 20:
        out = [_wrap(" ".join(pieces), width, prefix, " " * len(prefix)), "\n"]
    else:
        out = [prefix, "\n", _wrap(" ".join(pieces), width, " " * 11, " " * 11), "\n"]
    doc = parser.description.partition("\f")[0] if parser.description else ""
    if doc:
        out += ["\n", _wrap(doc, width, "  ", "  ", paragraphs=True), "\n"]
    rows = [_option_row(a) for a in parser.actions_in_order if a.option_strings]
    if rows:
        out += ["\n", "Options:\n", *_definitions(rows, width)]
    commands = parser.subcommands()
    if commands:
        limit = width - 6 - max(len(n) for n in commands)
        rows = [(n, short_help(p.description or "", limit)) for n, p in sorted(commands.items())]
        out += ["\n", "Commands:\n", *_definitions(rows, width)]
    return "".join(out).rstrip("\n")

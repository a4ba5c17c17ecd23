"""The fast paths of parsing and of the rules give what the plain ones give (tables of cases,
each checked against a plain reference written here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tiers import sample

from tracelens import facts
from tracelens.keyvalues import _KeyValues
from tracelens.models import Document, Record
from tracelens.parse import lexer, lifecycle
from tracelens.parse.linesearch import records_matching
from tracelens.parse.usercontent import without_user_content
from tracelens.read import logread
from tracelens.regex import compile_regex
from tracelens.rulebook.context import Context

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


peel = logread._COMBINED.peel


def peel_one_by_one(text: str, line: int):
    rec = logread.peel(text, line)
    return (rec.text, rec.stream, rec.level, rec.time, rec.source)


PEEL = [
    # (case, line)
    ("no envelope", '  File "x.py", line 1, in f'),
    ("empty", ""),
    ("vllm", "(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700] EngineCore failed"),
    (
        "ray around vllm",
        "(RayWorkerWrapper pid=9, ip=10.0.0.2) (EngineCore_DP0 pid=1) INFO 01-20 13:03:50 [a.py:1] x",
    ),
    ("third process tag stays", "(pid=1) (pid=2) (pid=3) x"),
    ("logger twice", "INFO 01-20 13:03:50 [a.py:1] INFO 01-20 13:03:50 [b.py:2] x"),
    # the third timestamp: the envelope that matches first is used up, a later one matches
    (
        "used up, then another",
        "2024-01-01T00:00:00Z 2024-01-01T00:00:00Z 2024-01-01T00:00:00 INFO boom",
    ),
    ("srun twice", "3: 3: x"),
    (
        "kubectl, docker stamp, sglang",
        "[pod/sg-0/sglang] 2025-01-20T13:03:50.123Z [2025-01-20 13:03:50 DP1 TP3] boom",
    ),
    ("glog", "E0120 13:03:50.123456 1234 ProcessGroupNCCL.cpp:1234] boom"),
    ("c10 bracket", "[rank3]:[E1129 15:53:15.897998298 socket.cpp:1028] boom"),
    ("loguru", "2025-06-01 10:00:00.123 | ERROR    | app.server:run:42 - boom"),
    ("uvicorn", "ERROR:    Exception in ASGI application"),
    ("python logging", "WARNING:transformers.modeling_utils:x"),
    ("deepspeed", "[2025-01-20 13:03:50,123] [INFO] [partition_parameters.py:347:__exit__] x"),
    ("syslog", "Nov 29 03:14:12 gpu-node-7 python3[48211]: ERROR 01-20 13:03:50 [a.py:1] x"),
    ("compose", "vllm03  | WARN 01-20 13:03:50 [a.py:1] x"),
    ("line number", "  1234\tINFO:     127.0.0.1:51234 - x"),
    ("pdsh", "node-1: [rank0]: x"),
    ("mpirun", "[1,0]<stderr>:x"),
]


@pytest.mark.parametrize("line", [c[1] for c in PEEL], ids=[c[0] for c in PEEL])
def test_peel_matches_the_envelopes_tried_one_by_one(line):
    rec = peel(line, 7)
    assert (rec.text, rec.stream, rec.level, rec.time, rec.source) == peel_one_by_one(line, 7)


@pytest.mark.parametrize("folder", ["incidents", "healthy", "shapes", "captured"])
def test_peel_of_every_corpus_line(folder):
    lines = [
        raw
        for path in sample(sorted((CORPUS / folder).glob("**/*.log")))
        for _n, raw in logread.split_lines(logread.clean(path.read_text(errors="replace")))
    ]
    assert lines
    got = [(r.text, r.stream, r.level, r.time, r.source) for r in (peel(t, 1) for t in lines)]
    assert got == [peel_one_by_one(t, 1) for t in lines]


CLEAN = [
    # (case, text): records of a text with nothing to clean are read without the per-line clean
    ("plain", "INFO 01-20 13:03:50 [a.py:1] x\nb\tc\r\nd"),
    ("colour", "\x1b[1;31mERROR\x1b[0m x\nplain"),
    ("NUL and bell", "a\x00b\x07c\nd"),
    ("form feed", "a\x0cb\nc"),
    ("bare CR lines", "a\rb\x1b[0mc\r"),
]


@pytest.mark.parametrize("text", [c[1] for c in CLEAN], ids=[c[0] for c in CLEAN])
@pytest.mark.parametrize("lines_read", [0, logread._COMBINE_AFTER])
def test_records_are_cleaned_line_by_line_as_before(text, lines_read, monkeypatch):
    monkeypatch.setattr(logread, "_lines_read", lines_read)
    got = [(r.line, r.text) for r in logread.records_from_text(text)]
    assert got == [(n, peel(logread.clean(raw), n).text) for n, raw in logread.split_lines(text)]


def records(*texts: str):
    return [Record(line=k + 1, text=t) for k, t in enumerate(texts)]


TRIGGER_CASES = [
    # (case, record texts)
    ("none", ("nothing here", "")),
    ("overlapping", ("PyTorch version: 2.4.0 CUDA Version: 12.4 driver version: 550", "x")),
    ("one inside another", ("NCCL version 2.21.5", "NCCL INFO", "sglang==0.4.1 sglang")),
    ("first and last character", ("GPU 0: NVIDIA H100", "tail torch==")),
    ("a newline inside a record", ("Root Cause (first observed\nfailure)", "rank: 3 (local_rank")),
    ("short records between", ("a", "", "vllm==0.8.1", "", "b")),
]


@pytest.mark.parametrize("texts", [c[1] for c in TRIGGER_CASES], ids=[c[0] for c in TRIGGER_CASES])
def test_triggers_found_in_one_pass_are_those_in_each_line(texts):
    recs = records(*texts)
    want = [(r, {t for t in facts.TRIGGERS if t in r.text}) for r in recs]
    assert facts._with_triggers(recs) == [(r, found) for r, found in want if found]


@pytest.mark.parametrize("folder", ["incidents", "healthy", "captured"])
def test_triggers_of_every_corpus_log(folder):
    for path in sample(sorted((CORPUS / folder).glob("**/*.log"))):
        recs = logread.records_from_bytes(path.read_bytes())
        want = [(r, {t for t in facts.TRIGGERS if t in r.text}) for r in recs]
        assert facts._with_triggers(recs) == [(r, f) for r, f in want if f], path.name


STOPS = [
    # (case, record texts)
    ("none", ("INFO start", "RuntimeError: x")),
    ("empty log", ()),
    ("one", ("INFO start", "INFO Shutting down", "KeyboardInterrupt")),
    ("first of two", ("a", "Received SIGTERM", "b", "shutdown triggered")),
    ("aborted at the end only", ("Aborted! then more", "x Aborted!")),
    ("ctrl-c at the start only", ("x ^C", "^C")),
    ("a newline inside a record", ("a\nAborted!", "Received signal SIGINT")),
    ("non-ascii before", ("déjà vu ✓", "signal=SIGINT")),
    # vLLM's process manager stopping its own engine core after the API server failed
    (
        "sent by the program itself",
        (
            "[shutdown] Process manager: send sigterm to process EngineCore",
            "[shutdown] EngineCore: trigger received signal=SIGTERM",
            "ValueError: x",
        ),
    ),
    (
        "sent by itself, then asked",
        ("send sigterm to process EngineCore", "received signal=SIGTERM", "x", "Received SIGINT"),
    ),
    ("sent by itself, a newline in a record", ("a\nb", "send sigterm to pid 7", "signal=SIGTERM")),
]


@pytest.mark.parametrize("texts", [c[1] for c in STOPS], ids=[c[0] for c in STOPS])
def test_stop_line_is_the_first_record_that_asks_to_stop(texts):
    doc = Document(records=records(*texts))
    plain = [
        r.line
        for k, r in enumerate(doc.records)
        if lifecycle._STOP_REQUESTED.search(r.text)
        and not (
            "SIGTERM" in r.text
            and any("send sigterm to" in p.text.lower() for p in doc.records[:k])
        )
    ][:1]
    assert lifecycle.stop_requested_line(doc) == (plain[0] if plain else None)


CONTEXTS = [
    # (case, record texts)
    ("plain", ("INFO start", "RuntimeError: x")),
    ("empty log", ()),
    ("request logging", ("Received request chatcmpl-1: prompt: 'why CUDA out of memory?'", "x")),
    ("json body", ('GenerateReqInput(text="boom")', '{"prompt": "CUDA error"}')),
    ("non-ascii", ("déjà vu ✓", "prompt: 'ü'", "z")),
]


@pytest.mark.parametrize("texts", [c[1] for c in CONTEXTS], ids=[c[0] for c in CONTEXTS])
def test_context_text_is_each_record_masked_and_joined(texts):
    ctx = Context(Document(records=records(*texts)))
    parts = [without_user_content(t) for t in texts]
    starts = [sum(len(p) + 1 for p in parts[:k]) for k in range(len(parts))]
    bstarts = [sum(len(p.encode()) + 1 for p in parts[:k]) for k in range(len(parts))]
    assert (ctx.text, ctx.offsets, ctx.boffsets) == ("\n".join(parts), starts, bstarts)
    assert ctx.btext == ctx.text.encode()


LINE_SEARCHES = [
    # (case, Python regex, RE2 candidate pattern, record texts)
    ("none", r"\bvLLM API server version\b", None, ("a", "b")),
    ("empty log", r"x", None, ()),
    (
        "several",
        r"\bStarting elastic_operator\b",
        None,
        ("Starting elastic_operator", "x", "y Starting elastic_operator z"),
    ),
    # Python's \b sees a Unicode letter as a word character, RE2's does not: RE2 proposes, Python says no
    (
        "unicode word before",
        r"\bserver_args=ServerArgs\(",
        None,
        ("éserver_args=ServerArgs(", "server_args=ServerArgs("),
    ),
    # a looser candidate pattern: every candidate is checked line by line
    (
        "candidates checked",
        r"step \d+ loss",
        rb"step",
        ("step 1 loss", "step x loss", "a step", "step ٣ loss"),
    ),
    ("a match across lines", r"a\s*b", rb"a\s*b", ("xa", "b", "a b")),
    ("a newline inside a record", r"^b", None, ("a\nb", "b")),
    ("non-ascii offsets", r"boom", None, ("déjà ✓", "✓ boom", "boom é")),
]


@pytest.mark.parametrize(
    "rx,candidates,texts", [c[1:] for c in LINE_SEARCHES], ids=[c[0] for c in LINE_SEARCHES]
)
def test_records_matching_is_the_records_searched_one_by_one(rx, candidates, texts):
    recs = records(*texts)
    py = re.compile(rx)
    re2rx = compile_regex(candidates or rx.encode(), multiline=True)
    want = [k for k, r in enumerate(recs) if py.search(r.text)]
    assert records_matching(recs, py, re2rx) == want


def tokens(recs) -> list[tuple[str, str, int, list[int]]]:
    return [(t.type, str(t), t.line, t.lines) for t in lexer.lex(recs)]


LEX = [
    # (case, record texts)
    (
        "chain",
        (
            "x",
            "Traceback (most recent call last):",
            '  File "a.py", line 1, in f',
            "    g()",
            "ValueError: a",
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            "Traceback (most recent call last):",
            '  File "b.py", line 2, in h',
            "RuntimeError: b",
            "after",
        ),
    ),
    (
        "quoted traceback",
        (
            "a",
            "b",
            "c",
            "multiprocessing.pool.RemoteTraceback: ",
            '"""',
            "Traceback (most recent call last):",
            '  File "a.py", line 1, in f',
            "KeyError: 1",
            '"""',
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            "Traceback (most recent call last):",
            '  File "b.py", line 2, in g',
            "KeyError: 1",
        ),
    ),
    (
        "fault dump",
        (
            "a",
            "b",
            "c",
            "d",
            "Fatal Python error: Segmentation fault",
            "",
            "Current thread 0x00007f (most recent call first):",
            '  File "a.py", line 3 in f',
            "",
            "Extension modules: numpy",
            "done",
        ),
    ),
    (
        "group",
        (
            "a",
            "b",
            "c",
            "  + Exception Group Traceback (most recent call last):",
            '  |   File "a.py", line 1, in f',
            "  | ExceptionGroup: x (1 sub-exception)",
            "  +-+---------------- 1 ----------------",
            "    | ValueError: y",
            "    +------------------------------------",
            "z",
        ),
    ),
    ("frames at the start", ('  File "a.py", line 1, in f', "    g()", "ValueError: a")),
    (
        "header mid-line",
        (
            "a",
            "b",
            "c",
            "d",
            "3.61it/s]Traceback (most recent call last):",
            '  File "a.py", line 1, in f',
            "OSError: x",
        ),
    ),
]


@pytest.mark.parametrize("texts", [c[1] for c in LEX], ids=[c[0] for c in LEX])
def test_lex_skipping_to_openers_gives_every_token(texts, monkeypatch):
    recs = records(*texts)
    fast = tokens(recs)
    monkeypatch.setattr(lexer, "_openers", lambda rs: list(range(len(rs))))
    assert fast == tokens(recs)
    assert fast


@pytest.mark.parametrize("folder", ["incidents", "shapes", "captured", "unrecognized"])
def test_lex_of_every_corpus_log(folder, monkeypatch):
    logs = [
        logread.records_from_bytes(p.read_bytes())
        for p in sample(sorted((CORPUS / folder).glob("**/*.log")))
    ]
    fast = [tokens(recs) for recs in logs]
    monkeypatch.setattr(lexer, "_openers", lambda rs: list(range(len(rs))))
    assert fast == [tokens(recs) for recs in logs]
    assert any(fast)


MODULES = [
    "/usr/lib/python3.12/dist-packages/vllm/v1/attention/selector.py",
    "/opt/conda/envs/vllm/lib/python3.10/contextlib.py",
    "<frozen importlib._bootstrap>",
    "C:\\Python311\\Lib\\site-packages\\torch\\nn\\modules\\module.py",
    "/home/u/vllm/vllm/entrypoints/openai/api_server.py",
    "relative.py",
    "no-extension",
]


@pytest.mark.parametrize("path", MODULES)
def test_module_of_is_the_same_cached(path):
    lexer.module_of.cache_clear()
    first = lexer.module_of(path)
    assert lexer.module_of(path) == first == lexer.module_of.__wrapped__(path)
    assert lexer.module_of.cache_info().hits == 1


class CountingRegex:
    """A regex that counts its searches."""

    def __init__(self, pattern: str):
        self.rx = compile_regex(pattern)
        self.calls = 0

    def search(self, text: str):
        self.calls += 1
        return self.rx.search(text)


SEARCHES = [
    # (pattern, texts searched in turn)
    (r"(?P<t>\w+Error)", ("ValueError", "ValueError", "KeyError", "ValueError")),
    (r"vllm/.*attention", ("/x/vllm/attention/a.py", "/x/vllm/attention/a.py", "/y/b.py")),
    (r"never", ("a", "a")),
]


@pytest.mark.parametrize("pattern,texts", SEARCHES, ids=[p for p, _ in SEARCHES])
def test_context_search_is_rx_search_once_per_text(pattern, texts):
    ctx = Context(Document(records=records("x")))
    rx = CountingRegex(pattern)
    got = [ctx.search(rx, t) for t in texts]
    want = [rx.rx.search(t) for t in texts]
    assert [m and m.group(0) for m in got] == [m and m.group(0) for m in want]
    assert rx.calls == len(set(texts))


class CharByChar(_KeyValues):
    """The key reader one character at a time (``str.isalnum()`` or ``_``)."""

    def pairs(self) -> list[tuple[str, str]]:
        text, out, pos = self.text, [], 0
        while (eq := text.find("=", pos)) >= 0:
            k = eq
            while k > pos and (text[k - 1].isalnum() or text[k - 1] == "_"):
                k -= 1
            start = eq + 1
            end = self._value_end(start) if k < eq else None
            if end is None:
                pos = start
                continue
            out.append((text[k:eq], text[start:end]))
            pos = end
        return out

    def _key_after(self, comma: int) -> bool:
        text, ok = self.text, False
        if text.startswith(", ", comma):
            j = comma + 2
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            ok = j > comma + 2 and text[j : j + 1] == "="
        return ok


PAYLOADS = [
    "model='/m, x', tp=4, q=None) more",
    "=x, a=1",
    "a==b, c=d",
    "größe=3, ключ=значение, 数=٣, _x_=1",
    "x, =1, y=2",
    "a=1,b=2, c=(d=e), f='g=h'",
    "Namespace(host=None, port=8000, model='m', tensor_parallel_size=8)",
    "k" * 5000 + "=v, " + "w" * 5000,
    "",
]


@pytest.mark.parametrize("text", PAYLOADS, ids=range(len(PAYLOADS)))
def test_key_values_read_as_character_by_character(text):
    assert _KeyValues(text).pairs() == CharByChar(text).pairs()


def test_key_values_of_every_corpus_line_with_an_equals_sign():
    texts = [
        r.text
        for p in sample(sorted(CORPUS.glob("**/*.log")))
        for r in logread.records_from_bytes(p.read_bytes())
        if "=" in r.text
    ]
    assert len(texts) > 500  # about 1,000 in the quick tier's one log in 32, 30,000 in --full
    assert [_KeyValues(t).pairs() for t in texts] == [CharByChar(t).pairs() for t in texts]


MASKED = [
    "Received request chatcmpl-1: prompt: 'why CUDA out of memory?', params: SamplingParams(n=1)",
    "Received request chatcmpl-2: params: SamplingParams(n=1), prompt_token_ids: None, lora_request: None.",
    "Received request cmpl-3: prompt_token_ids: [1, 2, 3], lora_request: None.",
    "Generated response chatcmpl-4: output: 'fine', output_token_ids: [5], finish_reason: stop",
    'GenerateReqInput(text="boom", sampling_params={})',
    'ChatCompletionRequest(messages=[{"role": "user", "content": "hi"}], model=\'m\')',
    "Received request chatcmpl-5 with nothing quoted",
    "INFO prompt: printed without request words: 'kept'",
]


@pytest.mark.parametrize("text", MASKED)
def test_masking_with_one_search_first_is_the_six_substitutions(text):
    from tracelens.parse.usercontent import _REQUEST_LOG, ALL_USER_CONTENT_PATTERNS, substitute
    from tracelens.regex import compile_regex

    expected = text
    if any(k in text for k in _REQUEST_LOG):
        for kind, rx, group in ALL_USER_CONTENT_PATTERNS:
            expected = substitute(kind, compile_regex(rx), group, expected)
    assert without_user_content(text) == expected

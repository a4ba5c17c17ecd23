"""SGLang prints a scheduler's failure on each tensor-parallel rank, only its first line under
the logger's header ("[time TP1] Scheduler hit an exception: Traceback ..."). Under a prefix on
every line (docker --timestamps, kubectl, compose, Ray, torchrun, srun -l) each rank's
exception keeps its whole message, as it does bare: the lines below the exception line belong
to the rank whose header opened the traceback, whatever prefix the collector put on them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tracelens.authoring.transforms import TRANSFORMS
from tracelens.engine import diagnose, parse
from tracelens.read.prefixes import container_stamped
from tracelens.rulebook.load import default_rules

ROOT = Path(__file__).resolve().parent.parent

FRAMES = [
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2631, in run_scheduler_process',
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, pp_rank, dp_rank)",
    '  File "/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py", line 81, in make_ir',
    "    return ast_to_ttir(self.fn, self, context=context, options=options, codegen_fns=codegen_fns,",
]
TRITON = [
    "triton.compiler.errors.CompilationError: at 1:0:",
    "def _per_token_group_quant_fp8(",
    "^",
    "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")",
    "",
]
NCCL = [
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:81, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
    "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
    "Last error:",
    "Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)",
]
BEFORE = [
    "[2025-08-11 16:20:19 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16",
    "[2025-08-11 16:20:19 TP1] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16",
]
SIGQUIT = "[2025-08-11 16:20:20] Received sigquit from a child process. It usually means the child failed."
LAST_LINE = {"triton": TRITON[3], "nccl": NCCL[3]}
BODIES = {"triton": TRITON, "nccl": NCCL}
RANKS = {  # the order the ranks print in
    "one-rank": (0,),
    "tp1-then-tp0": (1, 0),
    "tp0-then-tp1": (0, 1),
    "three-ranks": (2, 1, 0),
}


def _head(rank: int) -> str:
    return f"[2025-08-11 16:20:20 TP{rank}] Scheduler hit an exception: Traceback (most recent call last):"


def _log(body: list[str], ranks: tuple[int, ...]) -> bytes:
    lines = [*BEFORE]
    for rank in ranks:
        lines += [_head(rank), *FRAMES, *body]
    return ("\n".join([*lines, SIGQUIT]) + "\n").encode()


def _then(*names: str) -> Callable[[bytes], bytes]:
    """Transforms applied one after another (the first innermost)."""
    table = dict(TRANSFORMS)

    def apply(raw: bytes) -> bytes:
        for name in names:
            raw = table[name](raw)
        return raw

    return apply


ENVELOPES: list[tuple[str, Callable[[bytes], bytes]]] = [
    ("bare", lambda raw: raw),
    *TRANSFORMS,
    # kubectl logs --timestamps --prefix, srun -l around docker's timestamps
    ("docker-timestamps+kubectl-prefix", _then("docker-timestamps", "kubectl-prefix")),
    ("docker-timestamps+srun-label", _then("docker-timestamps", "srun-label")),
]


@pytest.mark.parametrize("envelope", ENVELOPES, ids=[name for name, _ in ENVELOPES])
@pytest.mark.parametrize("ranks", RANKS.values(), ids=list(RANKS))
@pytest.mark.parametrize("body", list(BODIES), ids=list(BODIES))
def test_each_rank_keeps_its_whole_message(body, ranks, envelope):
    _name, wrap = envelope
    doc = parse(wrap(_log(BODIES[body], ranks)).decode())
    assert len(doc.tracebacks) == 1  # the ranks' copies fold: the same traceback, message and all
    tb = doc.tracebacks[0]
    assert len(tb.lines) == len(ranks)
    assert [s.rsplit(" / ", 1)[-1] for s in tb.streams] == [f"TP{r}" for r in ranks]
    assert tb.exception is not None
    message = tb.exception.message.rstrip().splitlines()
    assert message[-1] == LAST_LINE[body]
    assert not any("Received sigquit" in line for line in message)


@pytest.mark.parametrize("envelope", ENVELOPES, ids=[name for name, _ in ENVELOPES])
@pytest.mark.parametrize("body", list(BODIES), ids=list(BODIES))
def test_a_header_without_a_rank_keeps_its_message_and_only_it(body, envelope):
    """SGLang's launcher heads its lines with the time alone: under the container's
    timestamp on every line, its "[time] Received sigquit ..." right below the message is
    still new output, as it is bare."""
    _name, wrap = envelope
    head = _head(0).replace(" TP0]", "]")
    raw = ("\n".join([head, *FRAMES, *BODIES[body], SIGQUIT]) + "\n").encode()
    doc = parse(wrap(raw).decode())
    assert len(doc.tracebacks) == 1
    exc = doc.tracebacks[0].exception
    assert exc is not None
    assert exc.message.rstrip().splitlines()[-1] == LAST_LINE[body]


RAY_MISMATCH = [
    "RuntimeError: Version mismatch: The cluster was started with:",
    "    Ray: 2.43.0",
    "    Python: 3.11.10",
    "This process on node 10.0.0.5 was started with:",
    "    Ray: 2.44.1",
    "    Python: 3.11.10",
]


INDENT_KEPT = [(name, wrap) for name, wrap in ENVELOPES if name != "lost-indentation"]


@pytest.mark.parametrize("envelope", INDENT_KEPT, ids=[name for name, _ in INDENT_KEPT])
def test_an_exception_line_alone_keeps_its_message_block(envelope):
    """An exception printed without a traceback (Ray's version check): the indented block
    below it is its message under every prefix too."""
    _name, wrap = envelope
    doc = parse(wrap(("\n".join(RAY_MISMATCH) + "\n").encode()).decode())
    [err] = [e for e in doc.errors if e.kind == "exception"]
    assert err.more == [line.strip() for line in RAY_MISMATCH[1:]]


@pytest.mark.parametrize(
    "lines,stamped",
    [
        # docker / kubectl --timestamps: every line, the blank ones too, a prefix before it
        (
            [
                (1, "2025-11-20T13:00:01.5Z [2025-11-20 13:00:01 TP0] up"),
                (2, "2025-11-20T13:00:02Z "),
            ],
            True,
        ),
        ([(1, "[pod/w/main] 2025-11-20T13:00:01+00:00 a"), (2, "0: 2025-11-20T13:00:01Z b")], True),
        # a bare line left blank, a progress bar's frame after a bare CR: not asked
        ([(1, "2025-11-20T13:00:01Z a"), (2, ""), (3, "2025-11-20T13:00:02Z b"), (3, "50%")], True),
        # a program's own stamps on its log lines, its traceback's lines bare
        (
            [(1, "2025-11-20T13:00:01Z ERROR boom"), (2, "Traceback (most recent call last):")],
            False,
        ),
        ([(1, "[2025-11-20 13:00:01 TP0] up"), (2, "[2025-11-20 13:00:02 TP0] down")], False),
        ([], False),
    ],
    ids=["docker", "prefixed", "blank-and-cr", "program-stamps", "sglang-only", "empty"],
)
def test_container_stamped(lines, stamped):
    assert container_stamped(lines) is stamped


def _two_ranks(example: str) -> bytes:
    """A rule's one-rank SGLang example printed by TP1, then by TP0, each traceback under its
    own header line."""
    lines = example.splitlines()
    start = next(k for k, line in enumerate(lines) if "Scheduler hit an exception" in line)
    end = next(k for k in range(start, len(lines)) if "Received sigquit" in lines[k])
    tb = lines[start:end]
    out = [*lines[:start]]
    for rank in (1, 0):
        out += [tb[0].replace("] Scheduler", f" TP{rank}] Scheduler", 1), *tb[1:]]
    return ("\n".join([*out, *lines[end:]]) + "\n").encode()


EXAMPLES = sorted((ROOT / "rules" / "sglang").glob("fp8-triton-pre-ada.example*.log"))


@pytest.fixture(scope="module")
def rules():
    return default_rules()


@pytest.mark.parametrize("envelope", ENVELOPES, ids=[name for name, _ in ENVELOPES])
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_two_ranks_under_a_prefix_get_the_rule_that_reads_the_message(rules, example, envelope):
    _name, wrap = envelope
    rep = diagnose(wrap(_two_ranks(example.read_text())), rules)
    assert rep.diagnoses[0].rule_id == "sglang/fp8-triton-pre-ada"

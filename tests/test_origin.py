"""The originating failure: which traceback a log's failure starts from, and which it does not."""

from __future__ import annotations

import pytest

from tracelens.engine import diagnose, parse
from tracelens.rulebook.load import default_rules
from tracelens.rulebook.origin import Wrappers, find_failures, find_origin

TB = (
    "Traceback (most recent call last):\n"
    '  File "/app/bench.py", line 58, in <module>\n'
    "    llm = LLM(model=args.model)\n"
    '  File "/opt/py/vllm/model_executor/layers/attention.py", line 51, in __init__\n'
    '    raise ValueError(f"head_size ({self.head_size}) is not supported. "\n'
    "ValueError: head_size (100) is not supported. Supported head sizes: [64, 80, 96, 128].\n"
)
WARN = "WARNING 07-03 12:58:44 tokenizer.py:63] Using a slow tokenizer.\n"
INFO = "INFO 07-03 12:58:45 llm_engine.py:60] Retrying with the fast tokenizer\n"


@pytest.mark.parametrize(
    "log,origin_line",
    [
        # an uncaught traceback right under an unrelated warning line: the program's end
        (WARN + TB, 7),
        (WARN + TB + "(venv) user@ws-07:~/bench$ \n", 7),
        # the same under a warning, and the program logged on: the handler's (logged, handled)
        (WARN + TB + INFO, None),
        # no warning above it: a failure
        (INFO + TB, 7),
        # under a warning, and what is logged next is the launcher's report of the failure
        (
            WARN
            + TB
            + "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 26374) of binary: /usr/bin/python3\n",
            7,
        ),
        # under torchrun's banner (a warning), and what follows is torchrun stopping the other
        # workers (warnings too): the worker's exception was uncaught
        (
            "W0902 13:20:51.608000 71244 torch/distributed/run.py:803] *****************************************\n"
            + TB
            + "W0902 13:21:03.114000 71244 torch/distributed/elastic/multiprocessing/api.py:908] Sending process 71311 closing signal SIGTERM\n"
            + "W0902 13:21:03.115000 71244 torch/distributed/elastic/multiprocessing/api.py:908] Sending process 71312 closing signal SIGTERM\n",
            7,
        ),
    ],
    ids=[
        "under-a-warning",
        "then-a-shell-prompt",
        "warning-handler-carried-on",
        "under-info",
        "then-the-launcher-says-it-failed",
        "then-torchrun-stops-the-other-workers",
    ],
)
def test_a_traceback_under_a_warning_is_handled_only_if_the_program_went_on(log, origin_line):
    doc = parse(log)
    origin = find_failures(doc, Wrappers(default_rules().wrappers)).origin
    assert (origin.line if origin else None) == origin_line


def test_a_shell_prompt_after_the_exception_is_not_part_of_its_message():
    first = diagnose(WARN + TB + "(venv) user@ws-07:~/bench$ ls\n").diagnoses[0]
    assert "user@ws-07" not in " ".join([first.root_cause, *first.notes])
    assert first.severity in ("error", "fatal")  # a failure, whichever rule knows it


DYNAMO = (
    "Traceback (most recent call last):\n"
    '  File "/env/lib/python3.10/site-packages/torch/_inductor/scheduler.py", line 2164, in create_backend\n'
    "    raise RuntimeError(\n"
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "RuntimeError: Found NVIDIA GeForce GTX 1080 Ti which is too old to be supported by the triton GPU compiler\n"
)
_PREFIX = "[2024-06-18 23:38:49,504] torch._dynamo.convert_frame: [WARNING] "


@pytest.mark.parametrize(
    ("log", "severity"),
    [
        # Dynamo logged the compile failure as a warning and ran the model eagerly
        ("".join(_PREFIX + line + "\n" for line in DYNAMO.splitlines()) + "generation done\n", "warning"),
        # the same traceback uncaught: the program died of it
        (DYNAMO, "fatal"),
    ],
    ids=["logged-as-warning", "uncaught"],
)  # fmt: skip
def test_a_known_failure_in_a_traceback_logged_as_a_warning_is_no_alarm(log, severity):
    first = diagnose(log).diagnoses[0]
    assert first.rule_id == "torch/compile/backend-compiler-failed"
    assert first.severity == severity
    assert ("logged this traceback as a warning" in " ".join(first.notes)) == (
        severity == "warning"
    )


_CHAT_TB = (
    "(APIServer pid=7) ERROR 12-02 08:55:03 [serving_chat.py:257] Error in preprocessing prompt inputs\n"
    "(APIServer pid=7) ERROR 12-02 08:55:03 [serving_chat.py:257] Traceback (most recent call last):\n"
    '(APIServer pid=7) ERROR 12-02 08:55:03 [serving_chat.py:257]   File "/env/vllm/entrypoints/chat_utils.py", line 1760, in apply_hf_chat_template\n'
    "(APIServer pid=7) ERROR 12-02 08:55:03 [serving_chat.py:257]     raise ValueError(\n"
    "(APIServer pid=7) ERROR 12-02 08:55:03 [serving_chat.py:257] ValueError: As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.\n"
    '(APIServer pid=7) INFO:     10.0.0.14:51880 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request\n'
)
_SERVED = '(APIServer pid=7) INFO:     10.0.0.14:51890 - "POST /v1/completions HTTP/1.1" 200 OK\n'
_UP = "(APIServer pid=7) INFO 12-02 08:53:42 [api_server.py:2052] Starting vLLM API server 0 on http://0.0.0.0:8000\n"
_SCRAPED = '(APIServer pid=7) INFO:     10.0.0.9:40112 - "GET /metrics HTTP/1.1" 200 OK\n'


def test_a_chat_template_that_refuses_one_conversation_is_that_clients_error():
    """vLLM's chat handler answers a jinja2 TemplateError (a template's raise_exception: roles
    that do not alternate) with 400 and serves the next request: one client's mistake."""
    refused = _CHAT_TB.replace(
        "ValueError: As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.",
        "jinja2.exceptions.TemplateError: Conversation roles must alternate user/assistant/user/assistant/...",
    )
    first = diagnose(_UP + refused + _SERVED).diagnoses[0]
    assert first.severity == "warning", (first.rule_id, first.notes)
    assert "4xx status" in " ".join(first.notes)


@pytest.mark.parametrize(
    ("log", "severity"),
    [
        # every request refused, none answered: the server cannot serve (no chat template)
        (_UP + _CHAT_TB + _CHAT_TB, "error"),
        # one refusal while others are answered: that client's request, the server serves
        (_UP + _SERVED + _CHAT_TB + _SERVED, "warning"),
        # a single refusal and nothing else: one client's request, as before
        (_UP + _CHAT_TB, "warning"),
        # a metrics scrape or a health check answered is no request served
        (_UP + _CHAT_TB + _CHAT_TB + _SCRAPED, "error"),
    ],
    ids=["all-refused", "some-answered", "one-refusal", "all-refused-but-scraped"],
)
def test_a_server_that_refuses_every_request_is_failing(log, severity):
    first = diagnose(log).diagnoses[0]
    assert first.rule_id == "hf/chat-template-missing"
    assert first.severity == severity


_HTTPX = '2025-03-14 10:41:07,{ms} INFO httpx: HTTP Request: POST http://gpu-node-7:8000/v1/chat/completions "HTTP/1.1 400 Bad Request"\n'
_CLIENT = (
    _HTTPX.format(ms=498)
    + "2025-03-14 10:41:07,513 ERROR agent: task 1 failed\n"
    + "Traceback (most recent call last):\n"
    + '  File "/home/user/agent/loop.py", line 88, in step\n'
    + "    response = await self.client.chat.completions.create(\n"
    + '  File "/home/user/.venv/lib/python3.11/site-packages/openai/_base_client.py", line 1562, in _request\n'
    + "    raise self._make_status_error_from_response(err.response) from None\n"
    + "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': \"[{'type': "
    + "'value_error', 'msg': 'Value error, `tool_choice` must either be a named tool, "
    + '\\"auto\\", or \\"none\\".\'}]"}\n'
    + _HTTPX.format(ms=601)
    + "2025-03-14 10:41:07,673 ERROR agent: 2 consecutive failures, aborting run\n"
)


def test_a_clients_log_of_refused_requests_is_its_failure():
    """httpx's "HTTP Request: ... 400 Bad Request" is what a client was answered: in a
    client's log the refusal is the run's failure, not a server handling one bad client."""
    first = diagnose(_CLIENT).diagnoses[0]
    assert first.rule_id == "vllm/serving/tool-choice-value-unsupported"
    assert first.severity == "error", first.notes


def test_a_client_librarys_exception_is_the_clients_failure_with_the_servers_log_after_it():
    """The client's traceback (an exception of openai or LiteLLM) and, pasted after it, the
    server's access log of the 400s it was answered: the client failed, not a server that
    handled one bad request."""
    client = _CLIENT.replace(_HTTPX.format(ms=498), "").replace(_HTTPX.format(ms=601), "")
    pasted = '(APIServer pid=1) INFO:     10.0.0.31:50412 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request\n'
    first = diagnose(client + pasted + pasted).diagnoses[0]
    assert first.rule_id == "vllm/serving/tool-choice-value-unsupported"
    assert first.severity == "error", first.notes
    assert not [n for n in first.notes if "refused" in n]  # no server that refused it all


_POLL = "node-1:5021:5102 [3] proxy.cc:1512 NCCL WARN [Rem Allocator] Poll failed with error 1\n"


@pytest.mark.parametrize(
    "progress,severity",
    [
        ("Epoch: [0][{n}00/625]\tTime  0.403 ( 0.497)\tLoss 6.7120e+00 (6.8731e+00)\n", "warning"),
        ("Iter {n}00: loss = 2.31, lr = 0.0001\n", "warning"),
        ("Train: [0/300][{n}00/2502]  Time 0.41  Loss 6.12 (6.40)\n", "warning"),
        ("step {n}00 | loss 1.92 | grad norm 0.8\n", "warning"),
        ("waiting for rank {n}\n", "error"),  # no progress: the failure stands
        # vLLM's stats: work done, or a stalled engine's zeros (no progress)
        (
            "INFO 05-15 16:4{n}:08 [loggers.py:259] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
            "Avg generation throughput: 21.{n} tokens/s, Running: 1 reqs, Waiting: 0 reqs\n",
            "warning",
        ),
        (
            "INFO 05-15 16:4{n}:08 [loggers.py:259] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
            "Avg generation throughput: 0.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs\n",
            "error",
        ),
        # Ray Serve's request log: requests answered, or only its proxy's health checks
        (
            "INFO 2025-11-04 09:12:4{n},118 proxy 10.0.0.3 7c1e2f0a-9b1d -- POST /v1/chat/completions 200 812.4ms\n",
            "warning",
        ),
        (
            "INFO 2025-11-04 09:12:4{n},118 proxy 10.0.0.3 7c1e2f0a-9b1d -- GET /-/healthz 200 1.2ms\n",
            "error",
        ),
    ],
    ids=[
        "imagenet-epoch",
        "iter",
        "train",
        "step",
        "no-progress",
        "vllm-stats",
        "vllm-zero-stats",
        "ray-serve-answered",
        "ray-serve-probes",
    ],
)
def test_training_that_goes_on_after_a_failure_line_makes_it_a_warning(progress, severity):
    log = "starting training\n" + _POLL + "".join(progress.format(n=n) for n in (1, 2, 3, 4))
    first = diagnose(log).diagnoses[0]
    assert first.severity == severity


SGL = "[2026-11-20 10:01:02] server_args=ServerArgs(model_path='/models/m', tp_size=2)\n"
SIGQUIT = "[2026-11-20 10:05:11] Received sigquit from a child process. It usually means the child failed.\n"


@pytest.mark.parametrize(
    "log,top,category",
    [
        # SGLang's launcher SIGKILLs its process tree and then itself: the shell's "Killed" is
        # its doing, not the kernel's OOM killer
        (SGL + SIGQUIT + "Killed\n", "sglang/scheduler-died", "worker-died"),
        (
            SGL + SIGQUIT + "ERROR: process exited with code 137\n",
            "sglang/scheduler-died",
            "worker-died",
        ),
        # without the notice a bare "Killed" is still an OOM kill
        (SGL + "Killed\n", "system/host-oom-killed", "host-oom"),
        # a "Killed" printed before the notice is not explained by it (the OOM rule itself
        # stays out of logs with the notice: the kill is then reported unrecognized, as host-oom)
        (SGL + "Killed\n" + SIGQUIT, "unrecognized", "host-oom"),
    ],
    ids=["sigquit-then-killed", "sigquit-then-exit-137", "killed-alone", "killed-before-sigquit"],
)
def test_a_kill_after_sglangs_sigquit_notice_is_the_launchers_own(log, top, category):
    first = diagnose(log).diagnoses[0]
    assert (first.rule_id, first.category) == (top, category)


SERVER_UP = (
    "INFO:     Started server process [5512]\n"
    "INFO:     Application startup complete.\n"
    "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)\n"
)
ANSWER_500 = (
    'INFO:     10.0.0.20:51644 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error\n'
)
ANSWER_200 = 'INFO:     10.0.0.20:5165{} - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'


@pytest.mark.parametrize(
    "log,alarm,category",
    [
        # only a line that reports a failure printed elsewhere: never silent
        ("building ops\ncollect2: error: ld returned 1 exit status\n", True, "compile-failure"),
        (SERVER_UP + ANSWER_500 + ANSWER_500, True, "unrecognized"),
        # the server answered after its 500s: handled
        (SERVER_UP + ANSWER_500 + "".join(ANSWER_200.format(k) for k in range(4)), False, None),
        # a 500 whose cause is in the log: the cause is the origin, not the answer
        (SERVER_UP + TB + ANSWER_500, True, None),
    ],
    ids=["linker-wrapper-only", "only-500-answers", "500-then-answered", "500-after-a-traceback"],
)
def test_a_log_with_only_a_reported_failure_is_not_silent(log, alarm, category):
    rep = diagnose(log)
    alarms = [d for d in rep.diagnoses if d.severity in ("error", "fatal")]
    assert bool(alarms) is alarm
    if alarm and category is not None:
        assert (alarms[0].rule_id, alarms[0].category) == ("unrecognized", category)
    if alarm and category is None:
        assert "500" not in alarms[0].evidence[0].text


def test_an_exception_cpython_ignored_is_no_failure():
    log = (
        "Training finished. Best val acc 0.912\n"
        "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f2a1c3d5e50>\n"
        + TB
    )
    doc = parse(log)
    assert find_failures(doc, Wrappers(default_rules().wrappers)).origin is None
    # the same traceback without CPython's notice is the program's end
    assert find_failures(parse(INFO + TB), Wrappers(default_rules().wrappers)).origin is not None


def test_a_message_that_starts_on_the_next_line_names_its_first_words():
    # raise RuntimeError("\n  Some tensors share memory ...") prints the type alone on its line
    log = (
        "Traceback (most recent call last):\n"
        '  File "/work/export.py", line 12, in <module>\n'
        "    save_file(state, path)\n"
        "RuntimeError: \n"
        "            Some tensors share memory, this will lead to duplicate memory on disk and potential differences when loading them again: [{'wte.weight', 'lm_head.weight'}].\n"
        "            A potential way to correctly save your model is to use `save_model`.\n"
    )
    origin = find_failures(parse(log), Wrappers([])).origin
    assert origin is not None
    assert origin.text.startswith("Some tensors share memory")
    assert origin.line == 5


PYTEST_FAILED = (
    "============================= test session starts ==============================\n"
    "collected 2 items\n"
    "\n"
    "tests/test_shapes.py F.                                                   [100%]\n"
    "\n"
    "=================================== FAILURES ===================================\n"
    "________________________________ test_reshape __________________________________\n"
    "\n"
    "    def test_reshape():\n"
    ">       y = x.view(3, 5)\n"
    "E       RuntimeError: shape '[3, 5]' is invalid for input of size 16\n"
    "\n"
    "tests/test_shapes.py:9: RuntimeError\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_shapes.py::test_reshape - RuntimeError: shape '[3, 5]' is invalid for input of size 16\n"
    "========================= 1 failed, 1 passed in 0.42s ==========================\n"
)


@pytest.mark.parametrize(
    "log, origin_line",
    [
        (PYTEST_FAILED, 11),  # the exception on pytest's "E" line
        # --tb=no: only the summary says which test failed
        ("\n".join(PYTEST_FAILED.splitlines()[:4] + PYTEST_FAILED.splitlines()[-3:]) + "\n", 6),
        # unittest's closing line
        (
            "F.\n======\nFAIL: test_load (test_io.TestIO)\n------\nRan 2 tests in 0.01s\n\nFAILED (failures=1)\n",
            7,
        ),
        # an Apple framework's assertion, then the shell's abort notice
        (
            "Loading model...\n"
            "/AppleInternal/Library/BuildRoots/x/Library/Caches/com.apple.xbs/Sources/MPSCore/"
            "Types/MPSNDArray.mm:829: failed assertion `[MPSNDArray initWithDevice:descriptor:] "
            "Error: NDArray dimension length > INT_MAX'\n"
            "zsh: abort      python run.py\n",
            2,
        ),
        # a server that answers 500 after logging why at error level: the logged cause is quoted
        (
            "INFO 11-04 09:12:40 [api_server.py:1820] vLLM API server version 0.24.0\n"
            'INFO:     10.0.0.8:51644 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
            "ERROR 11-04 09:12:44 [serving_chat.py:1205] Widget frobnicator returned an impossible state\n"
            'INFO:     10.0.0.8:51650 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error\n',
            3,
        ),
        # `ray job submit` of a job that failed, its own output saying nothing recognizable
        (
            "Job submission server address: http://127.0.0.1:8265\n"
            "------------------------------------------\n"
            "Job 'raysubmit_Ab12Cd34' failed\n"
            "------------------------------------------\n"
            "\n"
            "Status message: Job entrypoint command failed with exit code 1\n",
            3,
        ),
        # `kubectl describe pod` of a pod that cannot start: its events are all it shows
        (
            "$ kubectl describe pod trainer-0\n"
            "Events:\n"
            "  Type     Reason              Age               From                     Message\n"
            "  ----     ------              ----              ----                     -------\n"
            "  Normal   Scheduled           3m                default-scheduler        Successfully assigned ml/trainer-0 to gpu-node-2\n"
            '  Warning  FailedAttachVolume  56s (x9 over 3m)  attachdetach-controller  AttachVolume.Attach failed for volume "pvc-7f1e" : rpc error: code = Internal desc = volume is still attached to gpu-node-5\n',
            6,
        ),
    ],
)
def test_a_failing_test_session_or_job_is_never_silent(log, origin_line):
    report = diagnose(log)
    assert report.diagnoses and report.diagnoses[0].severity in ("error", "fatal")
    assert origin_line in [e.line for e in report.diagnoses[0].evidence]


_DESCRIBE = (
    "{prompt}kubectl describe pod trainer-0 | sed -n '/State:/,/Mounts:/p'\n"
    "    State:          Waiting\n"
    "      Reason:       CrashLoopBackOff\n"
    "    Last State:     Terminated\n"
    "      Exit Code:    1\n"
    "    Restart Count:  4\n"
    "    Limits:\n"
    "      cpu:     6\n"
    "    Mounts:\n"
    "      /data from data (ro)\n"
)
KOHYA_START = (
    "17:22:43-020113 INFO     Version: v21.7.16\n"
    "17:22:43-026247 INFO     nVidia toolkit detected\n"
    "17:22:49-350014 INFO     Torch 2.0.1+cu118\n"
)


@pytest.mark.parametrize(
    "typed",
    [
        '$ grep -l "OutOfMemoryError" autotuning_exps/*/stderr.log',
        "user@node-1:~/runs$ grep -c 'CUDA error: out of memory' train.log",
        '(venv) user@node-1:/srv# rg "Segmentation fault" logs/',
        'PS C:\\work> Select-String -Path *.log -Pattern "Traceback"',
    ],
)
def test_a_command_the_user_typed_is_no_failure_whatever_its_words(typed):
    report = diagnose(KOHYA_START + typed + "\n")
    assert not report.document.errors, report.document.errors
    assert not report.diagnoses


@pytest.mark.parametrize(
    "tail, alarm",
    [
        # the program logged why it stopped, and exited: its last words are the failure
        ("17:22:50-122539 ERROR    Could not load the frobnicator: state 7 is impossible\n", True),
        # the same error with the program carrying on after it: handled
        (
            "17:22:50-122539 ERROR    Could not load the frobnicator: state 7 is impossible\n"
            + "".join(f"17:23:{k:02d}-000000 INFO     step {k} loss 1.{k}\n" for k in range(10)),
            False,
        ),
        # a line that only reports a failure (what a symptom rule stands for): a worker stopped
        # with SIGTERM after the run finished
        (
            "17:22:50-122539 INFO     Processed prompts: 100%\n"
            "ERROR 06-14 11:05:01 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 90212 died, exit code: -15\n",
            False,
        ),
        # at interpreter shutdown
        ("17:22:50-122539 ERROR    Exception ignored during interpreter shutdown\n", False),
        # a pasted terminal session: the last words of one command's output (the next prompt
        # starts another command's), whatever the commands after it print
        (
            "17:22:50-122539 ERROR    Could not load the frobnicator: state 7 is impossible\n"
            + _DESCRIBE.format(prompt="$ "),
            True,
        ),
        (
            "17:22:50-122539 ERROR    Could not load the frobnicator: state 7 is impossible\n"
            + _DESCRIBE.format(prompt="(venv) user@node-01:~/jobs$ "),
            True,
        ),
        # five more lines of its own output before the prompt: not its last words
        (
            "17:22:50-122539 ERROR    Could not load the frobnicator: state 7 is impossible\n"
            + "".join(f"17:22:5{k}-000000 INFO     cleaning up part {k}\n" for k in range(5))
            + _DESCRIBE.format(prompt="$ "),
            False,
        ),
    ],
)
def test_a_log_whose_last_words_are_an_error_is_not_silent(tail, alarm):
    report = diagnose(KOHYA_START + tail)
    errors = [d for d in report.diagnoses if d.severity in ("error", "fatal")]
    assert bool(errors) == alarm, [d.rule_id for d in report.diagnoses]
    if alarm:
        assert errors[0].rule_id == "unrecognized" and 4 in [e.line for e in errors[0].evidence]


def test_a_passing_test_session_is_silent():
    log = PYTEST_FAILED.replace("F.", "..").split("=================================== FAILURES")[0]
    log += "============================== 2 passed in 0.40s ===============================\n"
    assert not [d for d in diagnose(log).diagnoses if d.severity in ("error", "fatal")]


NCCL_TESTS = (
    "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20\n"
    "node-0:40211:40211 [0] NCCL INFO Bootstrap : Using [0]eth0:10.0.0.4<0>\n"
    "node-0:40211:40211 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
    "node-0:40211:40211 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.4<0>\n"
    "#       size         count    type   redop     time   algbw   busbw  error\n"
    "   134217728      33554432   float     sum   1452.1   92.43  161.75  5e-07\n"
)


@pytest.mark.parametrize(
    "summary, alarm",
    [
        ("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 55.2172\n", False),
        ("# Out of bounds values : 4 FAILED\n# Avg bus bandwidth    : 55.2172\n", True),
        ("", True),  # cut before the end: the warning stands
    ],
)
def test_nccl_tests_passing_check_makes_its_warnings_handled(summary, alarm):
    report = diagnose(NCCL_TESTS + summary)
    assert any(d.severity in ("error", "fatal") for d in report.diagnoses) is alarm


_NCCL_FALLBACK = (
    "node-1:2345:2390 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
    "node-1:2345:2390 [0] misc/ibvwrap.cc:113 NCCL WARN Call to ibv_open_device failed\n"
    "node-1:2345:2390 [0] transport/net_ib.cc:219 NCCL WARN NET/IB : Unable to open device mlx5_0\n"
    "node-1:2345:2390 [0] NCCL INFO NET/Socket : Using [0]ib0:10.1.0.1<0>\n"
)
_NCCL_DONE = "node-1:{pid}:2390 [0] NCCL INFO comm 0x55d0 rank 0 nranks 2 cudaDev 0 busId 1000 commId 0xabc - Init COMPLETE\n"


@pytest.mark.parametrize(
    ("tail", "failed"),
    [
        # the same process set its communicator up after the warnings: a transport it fell
        # back from, not a failure
        (_NCCL_DONE.format(pid=2345), False),
        # another process finishing says nothing of this one
        (_NCCL_DONE.format(pid=9999), True),
        # nothing after the warnings
        ("", True),
    ],
)
def test_an_nccl_warning_the_process_set_up_past_is_no_failure(tail, failed):
    doc = parse(_NCCL_FALLBACK + tail)
    origin, _ = find_origin(doc, Wrappers([]))
    assert (origin is not None) == failed


def test_a_refused_request_before_the_failure_that_stopped_the_server_comes_after_it():
    # a prompt over the context length answered with 400, then the engine core dies of an
    # illegal memory access (the engine's "fatal error" line cut from the log, so the
    # context-length rule fires on the refused request too)
    from pathlib import Path

    log = (
        Path(__file__).resolve().parent.parent
        / "corpus"
        / "incidents"
        / "heldout-r120-06-vllm-0100-serving-400-noise-then-illegal-memory-access-sampled-token-ids-tolist.log"
    )
    text = "".join(
        ln
        for ln in log.read_text().splitlines(keepends=True)
        if "encountered a fatal error" not in ln
    )
    diags = diagnose(text).diagnoses
    assert (diags[0].rule_id, diags[0].severity) == ("cuda/illegal-memory-access", "fatal")
    (refused,) = [d for d in diags if d.rule_id == "vllm/prompt-exceeds-max-model-len"]
    assert refused.severity == "warning" and "4xx" in refused.notes[0]


def test_an_nccl_warning_the_process_set_up_past_is_no_failure_behind_a_collectors_prefix():
    prefix = '2024-05-01T10:00:00Z {container="trainer"} '
    lines = (_NCCL_FALLBACK + _NCCL_DONE.format(pid=2345)).splitlines(keepends=True)
    doc = parse("".join(prefix + ln for ln in lines))
    origin, _ = find_origin(doc, Wrappers([]))
    assert origin is None


SERVING = "".join(
    f'INFO:     10.0.0.5:{40300 + k} - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
    for k in range(6)
)
REQUEST_TB = (
    "ERROR:    Exception in ASGI application\n"
    "Traceback (most recent call last):\n"
    '  File "/srv/app/handlers.py", line 40, in chat\n'
    "    frames = load_clip(req.video)\n"
    '  File "/srv/app/video.py", line 12, in load_clip\n'
    "    assert len(frames) == expected\n"
    "AssertionError: frame count 23 != 24\n"
)
STARTED = "INFO:     Application startup complete.\n" + SERVING


@pytest.mark.parametrize(
    "log,severity",
    [
        # the request failed and was answered 500; the server answered the next ones
        (
            STARTED
            + 'INFO:     10.0.0.5:40400 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error\n'
            + REQUEST_TB
            + SERVING,
            "error",
        ),
        (
            STARTED
            + REQUEST_TB
            + 'INFO:     10.0.0.5:40400 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error\n'
            + SERVING,
            "error",
        ),
        # no server error answered (a stream that had begun): handled, the server lived on
        (STARTED + REQUEST_TB + SERVING, "warning"),
        # the server's own handler logged the exception and answered 500: it handled it
        (
            STARTED
            + REQUEST_TB.replace(
                "ERROR:    Exception in ASGI application", "Error in request: boom"
            )
            + 'INFO:     10.0.0.5:40400 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error\n'
            + SERVING,
            "warning",
        ),
    ],
    ids=["answer-logged-first", "answer-logged-after", "no-5xx-answer", "handler-answered-500"],
)
def test_a_request_answered_with_a_server_error_stays_a_failure_when_the_server_lives_on(
    log, severity
):
    diagnoses = diagnose(log).diagnoses
    if severity == "warning":  # handled: no alarm (a rule that knew it would say warning)
        assert not [d for d in diagnoses if d.severity in ("error", "fatal")], diagnoses
        return
    top = diagnoses[0]
    assert top.severity == severity and top.rule_id == "unrecognized"
    assert "AssertionError: frame count 23 != 24" in top.title
    assert "answered with a server error" in top.notes[0]


def test_only_pydantic_validation_errors_take_their_headline_from_a_later_line():
    repr_lines = "".join(f"  ({k}): Linear(in_features=8, out_features=8)\n" for k in range(4))
    hub = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/hub.py", line 160, in validate_repo_id\n'
        "    raise HFValidationError(\n"
        "huggingface_hub.errors.HFValidationError: Repo id must use alphanumeric chars: 'Model(\n"
        + repr_lines
        + ")'.\n"
    )
    origin = find_failures(parse(hub), Wrappers(default_rules().wrappers)).origin
    assert origin.text.startswith("huggingface_hub.errors.HFValidationError: Repo id must use")
    pydantic = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/cfg.py", line 12, in load\n'
        "    ModelConfig(**kwargs)\n"
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
        "max_model_len\n"
        "  Value error, max_model_len 65536 is larger than the model's 32768 [type=value_error]\n"
    )
    origin = find_failures(parse(pydantic), Wrappers(default_rules().wrappers)).origin
    assert "Value error, max_model_len 65536" in origin.text


def test_a_failure_followed_by_progress_then_a_symptom_was_not_carried_on_from():
    """Requests still answered after a worker failed, then the engine declared dead: the run
    ended with that failure (the symptom after the progress says so)."""
    worker_tb = (
        "(VllmWorker TP1 pid=311) ERROR 05-15 16:40:01 [multiproc_executor.py:596] WorkerProc hit an exception.\n"
        "(VllmWorker TP1 pid=311) ERROR 05-15 16:40:01 [multiproc_executor.py:596] Traceback (most recent call last):\n"
        '(VllmWorker TP1 pid=311) ERROR 05-15 16:40:01 [multiproc_executor.py:596]   File "/srv/app/kernels.py", line 7, in run\n'
        "(VllmWorker TP1 pid=311) ERROR 05-15 16:40:01 [multiproc_executor.py:596]     launch(grid)\n"
        "(VllmWorker TP1 pid=311) ERROR 05-15 16:40:01 [multiproc_executor.py:596] RuntimeError: frobnicator jammed at stage 3\n"
    )
    answered = "".join(
        f'(APIServer pid=1) INFO:     10.0.0.5:{40300 + k} - "POST /v1/completions HTTP/1.1" 200 OK\n'
        for k in range(4)
    )
    dead = (
        "(APIServer pid=1) ERROR 05-15 16:45:09 [async_llm.py:480] AsyncLLM output_handler failed.\n"
        "(APIServer pid=1) Traceback (most recent call last):\n"
        '(APIServer pid=1)   File "/usr/lib/python3/site-packages/vllm/v1/engine/async_llm.py", line 441, in output_handler\n'
        "(APIServer pid=1)     outputs = await engine_core.get_output_async()\n"
        "(APIServer pid=1) vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.\n"
    )
    errors = [
        d
        for d in diagnose(worker_tb + answered + dead).diagnoses
        if d.severity in ("error", "fatal")
    ]
    assert errors and "frobnicator jammed" in " ".join(d.title for d in errors)


def test_an_earlier_crash_no_rule_knows_goes_before_the_collective_timeouts_it_caused():
    crash = (
        "[rank1]: Fatal Python error: Segmentation fault\n"
        "[rank1]: \n"
        "[rank1]: Current thread 0x00007f3a2b7fe640 (most recent call first):\n"
        '[rank1]:   File "/srv/app/writer.py", line 41 in write_shard\n'
        '[rank1]:   File "/srv/app/train.py", line 90 in save\n'
    )
    timeout = (
        "[rank0]:[E902 14:52:10.512341921 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=4212, OpType=ALLGATHER, NumelIn=1, "
        "NumelOut=2, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n"
    )
    diagnoses = diagnose(crash + "[rank0]: step 3 saving checkpoint\n" + timeout).diagnoses
    assert [d.rule_id for d in diagnoses[:2]] == ["unrecognized", "nccl/watchdog-timeout"]
    assert "Segmentation fault" in diagnoses[0].title


def test_a_warnings_module_line_is_never_the_failure_whatever_its_words():
    """cuDNN prints a caught out-of-memory as a UserWarning while it tries convolution plans;
    the crash that ends the run comes later."""
    warning = (
        "/opt/venv/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed "
        "with an OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. (Triggered internally "
        "at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:924.)\n"
        "  return F.conv2d(input, weight, bias, self.stride,\n"
    )
    crash = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/train.py", line 30, in check\n'
        '    raise ValueError("label 7 outside the 5 classes of the head")\n'
        "ValueError: label 7 outside the 5 classes of the head\n"
    )
    wrappers = Wrappers(default_rules().wrappers)
    origin = find_failures(parse("step 10 loss 2.31\n" + warning + crash), wrappers).origin
    assert origin is not None and origin.type == "ValueError"
    # alone, the warning is no failure at all
    assert (
        find_failures(
            parse("step 10 loss 2.31\n" + warning + "step 11 loss 2.30\n"), wrappers
        ).origin
        is None
    )


STREAM_TB = (
    "ERROR 02-10 14:06:02 [serving.py:1377] Error in chat completion stream generator.\n"
    "ERROR 02-10 14:06:02 [serving.py:1377] Traceback (most recent call last):\n"
    'ERROR 02-10 14:06:02 [serving.py:1377]   File "/srv/venv/lib/python3.12/site-packages/vllm/entrypoints/openai/serving_chat.py", line 1259, in chat_completion_stream_generator\n'
    "ERROR 02-10 14:06:02 [serving.py:1377]     frames = self.load_clip(request)\n"
    "ERROR 02-10 14:06:02 [serving.py:1377] AssertionError: frame count 23 != 24\n"
)


@pytest.mark.parametrize(
    ("notice", "severity"),
    [
        ("Error in chat completion stream generator.", "error"),
        ("Error in completion stream generator.", "error"),
        # any other handler that logged it and went on: handled
        ("Error while streaming the answer.", "warning"),
    ],
)
def test_an_exception_that_broke_a_streamed_answer_stays_a_failure_when_the_server_lives_on(
    notice, severity
):
    """vLLM logs such an exception under its notice and ends that stream with an error event;
    the access line said 200 when the stream began, and the server serves the next requests."""
    log = (
        STARTED + STREAM_TB.replace("Error in chat completion stream generator.", notice) + SERVING
    )
    diagnoses = diagnose(log).diagnoses
    if severity == "warning":
        assert not [d for d in diagnoses if d.severity in ("error", "fatal")], diagnoses
        return
    top = diagnoses[0]
    assert top.severity == "error" and top.rule_id == "unrecognized"
    assert "AssertionError: frame count 23 != 24" in top.title
    assert "streamed answer was ended with an error event (line 8)" in top.notes[0]


_ELASTIC = "I1104 12:41:09.884000 140602 torch/distributed/elastic/agent/server/api.py:844] "


@pytest.mark.parametrize(
    ("after", "severity"),
    [
        # every worker of the restarted group exited 0: the restart recovered
        (
            _ELASTIC + "[default] worker group successfully finished. "
            "Waiting 300 seconds for other agents to finish.\n",
            "warning",
        ),
        (
            _ELASTIC + "Local worker group finished (WorkerState.SUCCEEDED). "
            "Waiting 300 seconds for other agents to finish\n",
            "warning",
        ),
        # the agent restarted the group, but nothing says it finished
        (_ELASTIC + "[default] Starting worker group\n", "error"),
        # a Ray job whose driver finished well: the failure before it was retried past
        ("-" * 42 + "\nJob 'raysubmit_Qm4T8vZr2kLpX1aB' succeeded\n" + "-" * 42 + "\n", "warning"),
        ("Job 'raysubmit_Qm4T8vZr2kLpX1aB' failed\n", "error"),
        # Ray Train restored from its checkpoint and its training function returned
        (
            "Training completed after 20 iterations at 2024-03-05 11:42:10. "
            "Total running time: 41min 3s\n",
            "warning",
        ),
        # one Tune trial that completed says nothing of the others
        (
            "Trial train_fn_3f2a1_00001 completed after 20 iterations at 2024-03-05 11:42:10. "
            "Total running time: 41min 3s\n",
            "error",
        ),
        # trtexec's last line: it succeeded, or it did not
        ("&&&& PASSED TensorRT.trtexec [TensorRT v8601] # trtexec --onnx=m.onnx\n", "warning"),
        ("&&&& FAILED TensorRT.trtexec [TensorRT v8601] # trtexec --onnx=m.onnx\n", "error"),
    ],
    ids=[
        "group-finished",
        "local-group-succeeded",
        "restarted-only",
        "ray-job-succeeded",
        "ray-job-failed",
        "ray-train-completed",
        "ray-tune-trial-completed",
        "trtexec-passed",
        "trtexec-failed",
    ],
)
def test_an_elastic_restart_that_finishes_makes_the_failure_before_it_a_warning(after, severity):
    log = "starting training\n" + _POLL + "step 100 | loss 1.92\n" + after
    first = diagnose(log).diagnoses[0]
    assert first.severity == severity


@pytest.mark.parametrize(
    ("kill", "alarm"),
    [("+ kill -9 20871", False), ("+ pkill -9 -f vllm.entrypoints", False), (None, True)],
    ids=["kill-pid", "pkill", "no-kill"],
)
def test_a_shells_killed_notice_after_the_scripts_own_kill_is_no_failure(kill, alarm):
    """bash prints the same notice for a job the script SIGKILLed itself (traced by set -x) and
    for one the kernel's OOM killer took: only the second is a failure."""
    from tracelens.engine import diagnose
    from tracelens.models import ERROR_LEVEL

    lines = [
        "+ python3 benchmark_serving.py --backend vllm --num-prompts 200",
        "Successful requests:                     200",
        *([kill] if kill else []),
        "./run-benchmarks.sh: line 148: 20871 Killed                  python3 -m vllm.entrypoints.openai.api_server --model m",
    ]
    diags = diagnose("\n".join(lines)).diagnoses
    assert any(d.severity in ERROR_LEVEL for d in diags) is alarm, [
        (d.rule_id, d.severity) for d in diags
    ]


CHAIN = (
    "Traceback (most recent call last):\n"
    '  File "/opt/app/client.py", line 12, in connect\n'
    "    sock.connect(addr)\n"
    "FrobnicatorRefusedError: [Errno 111] the frobnicator refused\n"
    "\n"
    "The above exception was the direct cause of the following exception:\n"
    "\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/app/train.py", line 40, in <module>\n'
    "    client.wait_for_server()\n"
    '  File "/opt/app/client.py", line 30, in wait_for_server\n'
    "    raise FrobnicatorUnreachable(msg) from exc\n"
    "FrobnicatorUnreachable: The frobnicator server can't be reached at 10.0.0.5:9000 after 240 seconds.\n"
)


def test_an_unrecognized_chain_names_what_the_program_raised_for_its_first_failure():
    first = diagnose(CHAIN).diagnoses[0]
    assert first.rule_id == "unrecognized"
    assert [e.line for e in first.evidence if e.why == "the originating failure"] == [4]
    assert 13 in [e.line for e in first.evidence]
    assert "reported it as FrobnicatorUnreachable: The frobnicator server" in first.root_cause


def test_a_fatal_record_is_the_failure_a_crashed_childs_exit_code_reports():
    log = (
        "[rank0]:[E205 14:44:06.110 ProcessGroupNCCL.cpp:1484] [PG ID 0 Rank 0] frobnicator stalled\n"
        "[rank0]:[F205 14:45:06.376 ProcessGroupNCCL.cpp:1610] [PG ID 0 Rank 0] Terminating the "
        "process after the frobnicator stalled for 480 seconds\n"
        "W0205 14:45:07.218000 3401 torch/distributed/elastic/multiprocessing/api.py:900] Sending "
        "process 3477 closing signal SIGTERM\n"
        "E0205 14:45:08.104000 3401 torch/distributed/elastic/multiprocessing/api.py:874] failed "
        "(exitcode: -6) local_rank: 0 (pid: 3476) of binary: /usr/bin/python3\n"
    )
    origin, _ = find_origin(parse(log), Wrappers(default_rules().wrappers))
    assert origin is not None and origin.line == 2


_SERVE_WAIT = (
    "(ServeController pid=2144) WARNING 2025-04-22 13:4{k}:41,252 controller 2144 -- Deployment "
    "'VLLMDeployment' in application 'default' has 1 replicas that have taken more than 30s to be "
    "scheduled. This may be due to waiting for the cluster to auto-scale or for a runtime "
    'environment to be installed. Resources required for each replica: {{"CPU": 1.0, "GPU": 1.0}}, '
    'total resources available: {{"CPU": 7.0}}. Use `ray status` for more details.\n'
)
_SERVE_ANSWER = (
    "(ProxyActor pid=2301) INFO 2025-04-22 13:50:0{k},118 proxy 10.0.0.3 9f1c3e7a-2b5d -- "
    "POST /v1/chat/completions 200 1874.3ms\n"
)


@pytest.mark.parametrize("answered,severity", [(True, "warning"), (False, "error")])
def test_ray_serve_warnings_the_server_carried_on_from_are_no_alarm(answered, severity):
    # Ray Serve's header (level, time, component, id, "-- ") is peeled: the warning is one
    log = "".join(_SERVE_WAIT.format(k=k) for k in range(3))
    if answered:
        log += "".join(_SERVE_ANSWER.format(k=k) for k in range(3))
    diags = diagnose(log.encode(), default_rules(), source="serve.log").diagnoses
    assert diags[0].rule_id == "ray/serve-replicas-pending-resources"
    assert diags[0].severity == severity


_RUN = (
    "user@gpu-3:~/proj$ python train.py --config cfg.yaml\n"
    "INFO 2025-01-01 10:00:00 loading data\n"
    "INFO 2025-01-01 10:00:09 step 0\n"
    "user@gpu-3:~/proj$ echo $?\n"
)


@pytest.mark.parametrize(
    "status,category",
    [("137", "host-oom"), ("1", "unrecognized"), ("0", None), ("130", None)],
)
def test_the_exit_status_a_user_echoed_is_read(status, category):
    diags = diagnose((_RUN + status + "\n").encode(), default_rules(), source="run.log").diagnoses
    alarms = [d for d in diags if d.severity in ("error", "fatal")]
    if category is None:
        assert alarms == []
    else:
        assert alarms and alarms[0].category == category
        assert any(e.line == 5 for e in alarms[0].evidence)


def test_tensorflows_plugin_registration_noise_is_no_error_line_but_xlas_errors_are():
    noise = (
        "2025-07-31 08:14:52.331870: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:477] "
        "Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one "
        "has already been registered\n"
    )
    assert parse(noise.encode()).errors == []
    failed = (
        "2024-09-12 08:33:41.017266: E torch_xla/csrc/runtime/pjrt_computation_client.cc:821] "
        "Execution of replica 0 failed: RESOURCE_EXHAUSTED: Error allocating device buffer\n"
    )
    (err,) = parse((noise + failed).encode()).errors
    assert (err.line, err.level) == (2, "ERROR")


def test_an_error_logged_right_before_the_program_shut_itself_down_is_its_failure():
    log = (
        "2024-03-07T13:21:05.275160Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=1\n"
        "2024-03-07T13:21:09.664159Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 7 rank=1\n"
        "2024-03-07T13:21:09.758412Z ERROR text_generation_launcher: Shard 1 failed to start\n"
        "2024-03-07T13:21:09.758440Z  INFO text_generation_launcher: Shutting down shards\n"
        + "2024-03-07T13:21:09.802913Z  INFO shard-manager: text_generation_launcher: Terminating shard rank=0\n"
        * 5
    )
    failures = find_failures(parse(log.encode()), Wrappers(default_rules().wrappers))
    assert failures.reported is not None and failures.reported.line == 2


def test_a_failure_the_run_finished_after_is_a_warning():
    from pathlib import Path

    log = next(Path(__file__).parent.parent.glob("corpus/healthy/heldout-r326-01-*.log"))
    diags = diagnose(log.read_bytes(), default_rules(), source=str(log)).diagnoses
    first = diags[0]
    assert first.rule_id == "nccl/ib-completion-error" and first.severity == "warning"
    assert first.notes[0].startswith("The run finished after this (line 120)")
    # without the finished line (a crash that ended the run there) it stays an error
    cut = b"\n".join(log.read_bytes().splitlines()[:110]) + b"\n"
    assert diagnose(cut, default_rules(), source="cut.log").diagnoses[0].severity == "fatal"


def _checkpoint_exception(ranks: int) -> str:
    """A torch.distributed.checkpoint load failing on every rank, as torch prints it: the
    CheckpointException, then each rank's traceback one after the other."""
    site = "/opt/venv/lib/python3.11/site-packages/torch/distributed/checkpoint"
    lines = [
        "[rank0]:Traceback (most recent call last):",
        '[rank0]:  File "/home/user/train.py", line 88, in <module>',
        "[rank0]:    dcp.load(state, checkpoint_id=ckpt)",
        f'[rank0]:  File "{site}/utils.py", line 231, in reduce_scatter',
        "[rank0]:    raise result",
        "[rank0]:torch.distributed.checkpoint.api.CheckpointException: CheckpointException "
        f"ranks:dict_keys({list(range(ranks))})",
    ]
    for r in range(ranks):
        lines += [
            f"[rank0]:Traceback (most recent call last): (RANK {r})",
            f'[rank0]:  File "{site}/utils.py", line 192, in reduce_scatter',
            "[rank0]:    local_data = map_fun()",
            f'[rank0]:  File "{site}/default_planner.py", line 471, in create_default_local_load_plan',
            '[rank0]:    raise RuntimeError(f"Missing key in checkpoint state_dict: {fqn}.")',
            f"[rank0]:RuntimeError: Missing key in checkpoint state_dict: model.layers.{r}.weight.",
        ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("ranks", [1, 2, 4, 8])
def test_a_checkpoint_exception_of_many_ranks_is_its_first_ranks_failure(ranks):
    origin, _ = find_origin(parse(_checkpoint_exception(ranks)), Wrappers(default_rules().wrappers))
    assert origin is not None
    assert (origin.line, origin.type) == (12, "RuntimeError")  # rank 0's, not the last rank's
    first = origin.message.splitlines()[0]
    assert first == "Missing key in checkpoint state_dict: model.layers.0.weight."


ANSWERED_500 = (
    'INFO:     10.0.0.5:40400 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error\n'
)
GROUP_TB = (
    "ERROR:    Exception in ASGI application\n"
    "  + Exception Group Traceback (most recent call last):\n"
    '  |   File "/srv/venv/lib/python3.12/site-packages/starlette/responses.py", line 270, in __call__\n'
    "  |     async with anyio.create_task_group() as task_group:\n"
    '  |   File "/srv/venv/lib/python3.12/site-packages/anyio/_backends/_asyncio.py", line 781, in __aexit__\n'
    "  |     raise BaseExceptionGroup(\n"
    "  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)\n"
    "  +-+---------------- 1 ----------------\n"
    "    | Traceback (most recent call last):\n"
    '    |   File "/srv/venv/lib/python3.12/site-packages/starlette/responses.py", line 254, in stream_response\n'
    "    |     async for chunk in self.body_iterator:\n"
    '    |   File "/srv/app/stream.py", line 88, in chunks\n'
    '    |     usage = meta["completion_tokens"]\n'
    "    | KeyError: 'completion_tokens'\n"
    "    +------------------------------------\n"
)


@pytest.mark.parametrize("group", ["ExceptionGroup", "BaseExceptionGroup"])
def test_an_exception_group_is_never_the_failure_its_member_is(group):
    # anyio's TaskGroup collects what failed in it; the member says what went wrong
    tb = GROUP_TB.replace("| ExceptionGroup:", f"| {group}:")
    doc = parse(STARTED + tb + SERVING)
    origin, recovered = find_origin(doc, Wrappers([]))
    assert origin is not None and origin.type == "KeyError"
    group_line = next(r.line for r in doc.records if "Exception Group Traceback" in r.text)
    assert origin.start == group_line  # the member's failure was printed from the group on
    assert recovered  # the server answered later requests: a failed request, not a crash
    # the ASGI server's line above the group (the whole group's print) says the request
    # escaped the application, and it was answered with a server error
    answered = STARTED + tb + ANSWERED_500 + SERVING
    top = diagnose(answered).diagnoses[0]
    assert "KeyError: 'completion_tokens'" in top.title and top.severity in ("error", "fatal")
    assert "answered with a server error" in top.notes[0]


HEALTH_FAILED = (
    '[2026-05-14 05:31:40] INFO:     10.8.1.4:53130 - "GET /health HTTP/1.1" 200 OK\n'
    "[2026-05-14 05:32:30] Health check failed. Server couldn't get a response from detokenizer "
    "for last 20 seconds. tic start time: 05:32:10. last_heartbeat time: 05:31:50\n"
    '[2026-05-14 05:32:30] INFO:     10.8.1.4:53144 - "GET /health HTTP/1.1" 503 Service Unavailable\n'
)
SERVED_ON = "".join(
    f'[2026-05-14 05:32:{41 + k}] INFO:     10.8.1.9:{41006 + k} - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
    for k in range(6)
)


@pytest.mark.parametrize(
    "log,severity",
    [(HEALTH_FAILED + SERVED_ON, "warning"), (SERVED_ON + HEALTH_FAILED, "error")],
    ids=["served-on-after-it", "the-log-ends-on-it"],
)
def test_a_symptom_printed_without_a_level_that_the_server_served_past_is_a_warning(log, severity):
    # SGLang logs its health check failures with no level: one that the server answered
    # requests after (a burst of long prefills) did not stop it
    top = diagnose(log).diagnoses[0]
    assert top.rule_id == "sglang/health-check-no-detokenizer-response" and top.secondary
    assert top.severity == severity
    if severity == "warning":
        assert "without a level and carried on" in top.notes[0]

"""The traceback grammar: tables of inputs that must parse to given shapes, and inputs that
must not produce a traceback."""

from __future__ import annotations

import textwrap

import pytest
from tiers import one_quick

from tracelens.engine import parse
from tracelens.models import to_dict
from tracelens.parse.traceback import module_of, parse_records
from tracelens.read.logread import records_from_text


def shape(text: str) -> list[tuple]:
    tbs = parse_records(records_from_text(textwrap.dedent(text).strip("\n")))
    out = []
    for tb in tbs:
        exc = tb.exception
        out.append(
            (
                tb.kind,
                exc.type if exc else None,
                exc.message if exc else None,
                len(tb.frames),
                [s.link for s in tb.segments],
                tb.truncated,
            )
        )
    return out


VALID = {
    "plain": (
        """
        Traceback (most recent call last):
          File "/srv/app.py", line 3, in <module>
            main()
        ValueError: bad value
        """,
        [("python", "ValueError", "bad value", 1, [None], False)],
    ),
    "no source lines, frozen frames": (
        """
        Traceback (most recent call last):
          File "<frozen importlib._bootstrap>", line 1204, in _gcd_import
          File "<frozen importlib._bootstrap>", line 1176, in _find_and_load
        ModuleNotFoundError: No module named 'flash_attn'
        """,
        [("python", "ModuleNotFoundError", "No module named 'flash_attn'", 2, [None], False)],
    ),
    "carets 3.11+": (
        """
        Traceback (most recent call last):
          File "/srv/a.py", line 9, in f
            return x[idx] + y
                   ~^^^^^
        IndexError: list index out of range
        """,
        [("python", "IndexError", "list index out of range", 1, [None], False)],
    ),
    "direct cause chain": (
        """
        Traceback (most recent call last):
          File "/srv/a.py", line 2, in load
        FileNotFoundError: [Errno 2] No such file or directory: 'c.json'

        The above exception was the direct cause of the following exception:

        Traceback (most recent call last):
          File "/srv/a.py", line 5, in main
        RuntimeError: config could not be loaded
        """,
        [("python", "RuntimeError", "config could not be loaded", 2, [None, "cause"], False)],
    ),
    "during handling chain": (
        """
        Traceback (most recent call last):
          File "/srv/a.py", line 2, in parse
        ValueError: invalid literal for int() with base 10: '8x'

        During handling of the above exception, another exception occurred:

        Traceback (most recent call last):
          File "/srv/a.py", line 7, in main
        KeyError: 'tp'
        """,
        [("python", "KeyError", "'tp'", 2, [None, "context"], False)],
    ),
    "syntax error with caret block": (
        """
        Traceback (most recent call last):
          File "/srv/run.py", line 2, in <module>
            import pkg.broken
          File "/srv/pkg/broken.py", line 1
            def setup(:
                      ^
        SyntaxError: invalid syntax
        """,
        [("python", "SyntaxError", "invalid syntax", 2, [None], False)],
    ),
    "repeated frames": (
        """
        Traceback (most recent call last):
          File "/srv/r.py", line 3, in <module>
          File "/srv/r.py", line 2, in walk
          [Previous line repeated 996 more times]
        RecursionError: maximum recursion depth exceeded
        """,
        [("python", "RecursionError", "maximum recursion depth exceeded", 2, [None], False)],
    ),
    "multi-line message and notes": (
        """
        Traceback (most recent call last):
          File "/srv/m.py", line 1, in <module>
        RuntimeError: CUDA error: device-side assert triggered
        CUDA kernel errors might be asynchronously reported at some other API call.
        For debugging consider passing CUDA_LAUNCH_BLOCKING=1
        """,
        [
            (
                "python",
                "RuntimeError",
                "CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously "
                "reported at some other API call.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                1,
                [None],
                False,
            )
        ],
    ),
    "exception without message": (
        """
        Traceback (most recent call last):
          File "/srv/k.py", line 4, in <module>
        KeyboardInterrupt
        """,
        [("python", "KeyboardInterrupt", "", 1, [None], False)],
    ),
    "truncated by the end of the log": (
        """
        Traceback (most recent call last):
          File "/srv/t.py", line 4, in <module>
            run()
        """,
        [("python", None, None, 1, [None], True)],
    ),
    "faulthandler dump": (
        """
        Fatal Python error: Segmentation fault

        Thread 0x00007f3a9c1ff640 (most recent call first):
          File "/usr/lib/python3.11/threading.py", line 327 in wait

        Current thread 0x00007f3a2b7fe640 (most recent call first):
          File "/srv/x.py", line 5 in crash
          File "/srv/x.py", line 9 in <module>

        Extension modules: numpy.core._multiarray_umath (total: 1)
        """,
        [("faulthandler", "Fatal Python error", "Segmentation fault", 3, [None, None], False)],
    ),
    "faulthandler dump of the crashing thread alone (all_threads=False)": (
        """
        Fatal Python error: Segmentation fault

        Stack (most recent call first):
          File "/srv/comm.py", line 257 in ncclAllReduce
          File "/srv/comm.py", line 118 in all_reduce
        """,
        [("faulthandler", "Fatal Python error", "Segmentation fault", 2, [None], False)],
    ),
    "header left mid-line by a progress bar": (
        """
         57%|█████▋    | 378/661 [01:44<01:18,  3.61it/s]Traceback (most recent call last):
          File "/srv/eval.py", line 9, in <module>
        RuntimeError: CUDA out of memory. Tried to allocate 11.74 GiB
        """,
        [
            (
                "python",
                "RuntimeError",
                "CUDA out of memory. Tried to allocate 11.74 GiB",
                1,
                [None],
                False,
            )
        ],
    ),
    "indented traceback in a subprocess's output (pip)": (
        """
        × python setup.py egg_info did not run successfully.
        ╰─> [4 lines of output]
              Traceback (most recent call last):
                File "<string>", line 2, in <module>
                  import torch
              ModuleNotFoundError: No module named 'torch'
        """,
        [("python", "ModuleNotFoundError", "No module named 'torch'", 1, [None], False)],
    ),
    "message with blank lines, then a chain (huggingface_hub)": (
        """
        Traceback (most recent call last):
          File "/srv/hub.py", line 409, in hf_raise_for_status
        huggingface_hub.errors.GatedRepoError: 401 Client Error.

        Cannot access gated repo for url https://huggingface.co/org/model/resolve/main/config.json.
        Access to model org/model is restricted.

        The above exception was the direct cause of the following exception:

        Traceback (most recent call last):
          File "/srv/load.py", line 3, in load
        OSError: You are trying to access a gated repo.
        """,
        [
            (
                "python",
                "OSError",
                "You are trying to access a gated repo.",
                2,
                [None, "cause"],
                False,
            )
        ],
    ),
    "a paste that starts mid-traceback": (
        """
          File "/srv/a.py", line 448, in __init__
            wait_for_engine_startup()
          File "/srv/b.py", line 9, in wait_for_engine_startup
        RuntimeError: Engine core initialization failed.
        """,
        [("python", "RuntimeError", "Engine core initialization failed.", 2, [None], False)],
    ),
    "PowerShell's wrapper around a native command's stderr": (
        """
        python : Traceback (most recent call last):
        At line:1 char:1
        + python train.py
        + ~~~~~~~~~~~~~~~
            + CategoryInfo          : NotSpecified: (Traceback (most recent call last)::String) [], RemoteException
            + FullyQualifiedErrorId : NativeCommandError

          File "C:\\work\\train.py", line 12, in <module>
        AssertionError: Torch not compiled with CUDA enabled
        (.venv) PS C:\\work> python -c "import torch"
        """,
        [("python", "AssertionError", "Torch not compiled with CUDA enabled", 1, [None], False)],
    ),
    "PowerShell's wrapper, the position line in another language": (
        """
        .\\python\\python.exe : Traceback (most recent call last):
        所在位置 行:1 字符: 1
        + .\\python\\python.exe main.py 2>&1
        + ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
            + CategoryInfo          : NotSpecified: (Traceback (most recent call last)::String) [], RemoteException
            + FullyQualifiedErrorId : NativeCommandError

          File "E:\\app\\main.py", line 13, in <module>
        OSError: [WinError 126] module not found
        """,
        [("python", "OSError", "[WinError 126] module not found", 1, [None], False)],
    ),
    "a bare exception, then a warning line": (
        """
        Traceback (most recent call last):
          File "/srv/serve.py", line 3, in <module>
        KeyboardInterrupt
        /usr/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: leaked objects
        """,
        [("python", "KeyboardInterrupt", "", 1, [None], False)],
    ),
    "a message in a Markdown fence ends at the fence": (
        """
        Traceback (most recent call last):
          File "/srv/a.py", line 3, in <module>
        ValueError: max_model_len too large
        ```
        """,
        [("python", "ValueError", "max_model_len too large", 1, [None], False)],
    ),
    "two tracebacks in a row": (
        """
        Traceback (most recent call last):
          File "/srv/a.py", line 1, in <module>
        ValueError: one
        Traceback (most recent call last):
          File "/srv/b.py", line 1, in <module>
        TypeError: two
        """,
        [
            ("python", "ValueError", "one", 1, [None], False),
            ("python", "TypeError", "two", 1, [None], False),
        ],
    ),
}


@pytest.mark.parametrize("text,expected", VALID.values(), ids=list(VALID))
def test_valid(text, expected):
    assert shape(text) == expected


NOT_TRACEBACKS = {
    "prose mentioning tracebacks": "see the Traceback section of the docs for details",
    "frame line alone": '  File "/srv/a.py", line 3, in <module>',
    "exception line alone": "ValueError: bad value",
    "chain separator alone": "The above exception was the direct cause of the following exception:",
    "quoted header mid-line": "grep for 'Traceback (most recent call last):' in the logs",
}


@pytest.mark.parametrize("text", NOT_TRACEBACKS.values(), ids=list(NOT_TRACEBACKS))
def test_not_a_traceback(text):
    assert shape(text) == []


def test_exception_group_members():
    tbs = parse_records(
        records_from_text(
            textwrap.dedent("""
          + Exception Group Traceback (most recent call last):
          |   File "/srv/g.py", line 11, in <module>
          |     asyncio.run(main())
          | ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)
          +-+---------------- 1 ----------------
            | Traceback (most recent call last):
            |   File "/srv/g.py", line 4, in worker
            | ValueError: bad shard 1
            +---------------- 2 ----------------
            | TimeoutError: shard 2 did not answer
            +------------------------------------
        """).strip("\n")
        )
    )
    assert len(tbs) == 1
    exc = tbs[0].exception
    assert (tbs[0].kind, exc.type) == ("group", "ExceptionGroup")
    assert [(n.exception.type, n.exception.message) for n in exc.nested] == [
        ("ValueError", "bad shard 1"),
        ("TimeoutError", "shard 2 did not answer"),
    ]
    assert tbs[0].end_line == 11


def test_remote_traceback_is_nested():
    tbs = parse_records(
        records_from_text(
            textwrap.dedent('''
        multiprocessing.pool.RemoteTraceback:
        """
        Traceback (most recent call last):
          File "/srv/w.py", line 4, in shard
        MemoryError: shard 3 does not fit
        """

        The above exception was the direct cause of the following exception:

        Traceback (most recent call last):
          File "/srv/w.py", line 8, in <module>
        MemoryError: shard 3 does not fit
        ''').strip("\n")
        )
    )
    assert len(tbs) == 1
    first = tbs[0].segments[0].exception
    assert first.type == "multiprocessing.pool.RemoteTraceback"
    assert [n.exception.type for n in first.nested] == ["MemoryError"]
    assert [s.link for s in tbs[0].segments] == [None, "cause"]


def test_ray_task_error_frames_are_nested():
    tbs = parse_records(
        records_from_text(
            textwrap.dedent("""
        Traceback (most recent call last):
          File "/srv/driver.py", line 3, in <module>
        ray.exceptions.RayTaskError(RuntimeError): ray::RayWorkerWrapper.execute_method() (pid=4155, ip=10.0.0.2)
          File "/opt/venv/lib/python3.10/site-packages/vllm/worker/worker_base.py", line 465, in execute_method
            raise e
        RuntimeError: CUDA error: an illegal memory access was encountered
        """).strip("\n")
        )
    )
    exc = tbs[0].exception
    assert exc.type == "ray.exceptions.RayTaskError(RuntimeError)"
    assert [n.exception.type for n in exc.nested] == ["RuntimeError"]
    assert exc.nested[0].frames[0].module == "vllm.worker.worker_base"


def test_prefixed_traceback_parses_like_a_bare_one():
    bare = textwrap.dedent("""
        Traceback (most recent call last):
          File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 691, in run_engine_core
            engine_core = EngineCoreProc(*args, **kwargs)
                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
        ValueError: No valid attention backend found
        """).strip("\n")
    prefix = "(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700] "
    prefixed = "\n".join(prefix + line for line in bare.splitlines())
    a = parse_records(records_from_text(bare))
    b = parse_records(records_from_text(prefixed))
    assert [to_dict(t, exclude={"stream", "streams"}) for t in a] == [
        to_dict(t, exclude={"stream", "streams"}) for t in b
    ]


@pytest.mark.parametrize(
    "path,module",
    [
        (
            "/usr/local/lib/python3.12/dist-packages/vllm/v1/attention/selector.py",
            "vllm.v1.attention.selector",
        ),
        (
            "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py",
            "torch.nn.modules.module",
        ),
        ("/usr/lib/python3.11/multiprocessing/pool.py", "multiprocessing.pool"),
        ("<frozen runpy>", "runpy"),
        ("/srv/app/train.py", "train"),
        ("C:\\Python311\\Lib\\site-packages\\torch\\cuda\\__init__.py", "torch.cuda"),
        ("<string>", None),
    ],
)
def test_module_of(path, module):
    assert module_of(path) == module


def test_a_line_without_the_prefix_ends_a_prefixed_message():
    text = (
        "(EngineCore_DP0 pid=7) ERROR 01-20 13:03:50 [core.py:700] Traceback (most recent call last):\n"
        '(EngineCore_DP0 pid=7) ERROR 01-20 13:03:50 [core.py:700]   File "/srv/a.py", line 3, in f\n'
        "(EngineCore_DP0 pid=7) ERROR 01-20 13:03:50 [core.py:700] ValueError: bad header\n"
        "(EngineCore_DP0 pid=7) Process EngineCore_DP0:\n"
    )
    tbs = parse_records(records_from_text(text))
    assert tbs[0].exception.message == "bad header"


# --- tracebacks drawn by rich ---------------------------------------------------------------------


def _check_batch(x):
    if x != 2:  # not an assert statement: pytest would rewrite its message
        raise AssertionError(
            f"Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size {x} != 8 * 1 * 1"
        )


def _prepare_with_a_long_function_name_that_wraps_in_narrow_boxes(y):
    try:
        _check_batch(y)
    except AssertionError as exc:
        raise RuntimeError("batch setup failed") from exc


def _rich_traceback(width: int, show_locals: bool) -> str:
    import io

    from rich.console import Console
    from rich.traceback import Traceback

    try:
        _prepare_with_a_long_function_name_that_wraps_in_narrow_boxes(16)
    except RuntimeError:
        console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
        console.print(Traceback(show_locals=show_locals, width=width))
        return console.export_text()
    raise AssertionError("no exception")


@pytest.mark.parametrize("width", one_quick([60, 100, 160], keep=1))
@pytest.mark.parametrize("show_locals", [False, True])
def test_rich_tracebacks_parse_like_plain_ones(width, show_locals):
    text = "[2026-03-12 09:41:15,102] [INFO] [engine.py:88] starting\n" + _rich_traceback(
        width, show_locals
    )
    text += (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0\n"
    )
    (tb,) = parse_records(records_from_text(text))
    first, second = tb.segments
    assert first.exception.type == "AssertionError"
    assert first.exception.message == (
        "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu "
        "* gradient_acc_step * world_size 16 != 8 * 1 * 1"
    )
    assert (second.link, second.exception.type, second.exception.message) == (
        "cause",
        "RuntimeError",
        "batch setup failed",
    )
    assert [f.function for f in first.frames] == [
        "_prepare_with_a_long_function_name_that_wraps_in_narrow_boxes",
        "_check_batch",
    ]
    assert [f.function for f in second.frames][
        -1
    ] == "_prepare_with_a_long_function_name_that_wraps_in_narrow_boxes"
    assert all(f.file.endswith("test_traceback.py") and f.lineno for f in tb.frames)
    assert first.frames[-1].source.startswith("raise AssertionError(")
    assert tb.start_line == 2 and not tb.truncated


def test_a_rich_traceback_cut_inside_its_box_keeps_its_frames():
    text = "\n".join(_rich_traceback(100, False).splitlines()[:12])
    (tb,) = parse_records(records_from_text(text))
    assert (
        tb.truncated
        and tb.frames[0].function == "_prepare_with_a_long_function_name_that_wraps_in_narrow_boxes"
    )


def test_a_rich_traceback_under_a_rank_prefix():
    text = "".join(f"[rank3]: {line}\n" for line in _rich_traceback(100, False).splitlines())
    doc = parse(text)
    (tb,) = doc.tracebacks
    assert tb.stream == "rank3" and tb.exception.type == "RuntimeError"


@pytest.mark.parametrize(
    "exc_line",
    [
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 147456, Hardware limit: 101376.",
        "torch._dynamo.exc.Unsupported: call_function UserDefinedClassVariable() [] {}",
        "StopIteration",
    ],
)
def test_an_untagged_sglang_traceback_keeps_an_exception_of_any_class_name(exc_line):
    text = (
        "[2026-07-29 15:06:51 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2650, in run_scheduler_process\n'
        "    scheduler.event_loop_overlap()\n"
        f"{exc_line}\n"
        "\n"
        "[2026-07-29 15:06:51] Received sigquit from a child process. It usually means the child failed.\n"
    )
    (tb,) = parse(text).tracebacks
    assert tb.stream == "TP0" and not tb.truncated
    assert f"{tb.exception.type}: {tb.exception.message}".rstrip(": ") == exc_line


@pytest.mark.parametrize(
    "path,module",
    [
        ("/opt/conda/envs/vllm/lib/python3.10/contextlib.py", "contextlib"),
        (
            "/opt/conda/envs/vllm/lib/python3.10/site-packages/vllm/worker/worker.py",
            "vllm.worker.worker",
        ),
        ("/home/user/envs/sglang/lib/python3.12/asyncio/base_events.py", "asyncio.base_events"),
        ("/home/user/Megatron-LM/megatron/training/arguments.py", "megatron.training.arguments"),
        ("/home/user/src/vllm-main/vllm/vllm/config/__init__.py", "vllm.config"),
    ],
)
def test_module_of_an_environment_named_like_a_package(path, module):
    assert module_of(path) == module


def test_sglang_traceback_inside_ray_worker_prefixes_is_one_traceback():
    text = (
        "".join(
            f"(WorkerDict pid=2782, ip=10.0.0.7) {line}\n"
            for line in [
                "[2025-04-14 22:59:44 TP1] Scheduler hit an exception: Traceback (most recent call last):",
                '  File "/opt/venv/lib/python3.10/site-packages/sglang/srt/managers/scheduler.py", line 1999, in run_scheduler_process',
                "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)",
                "ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes.",
            ]
        )
        + "(WorkerDict pid=2782, ip=10.0.0.7) [2025-04-14 22:59:45 TP1] Scheduler exiting\n"
    )
    doc = parse(text)
    (tb,) = doc.tracebacks
    assert tb.stream == "WorkerDict pid=2782, ip=10.0.0.7 / TP1"
    assert tb.exception.type == "ValueError" and len(tb.frames) == 1


# --- tracebacks printed by IPython / Jupyter (real output of IPython 9 and 7, in corpus/shapes) --


@pytest.mark.parametrize("version", ["9", "7"])
def test_ipython_tracebacks_parse_like_plain_ones(version):
    from pathlib import Path

    log = (
        Path(__file__).resolve().parent.parent
        / "corpus"
        / "shapes"
        / f"ipython{version}-traceback.log"
    )
    chained, plain = parse(log.read_bytes()).tracebacks
    first, second = chained.segments
    assert (first.exception.type, second.link, second.exception.type) == (
        "AssertionError",
        "cause",
        "RuntimeError",
    )
    assert (
        first.exception.message
        == "global batch 16 is not micro batch 8 times accumulation 1 times world size 1"
    )
    assert [(f.function, f.lineno) for f in first.frames] == [("prepare", 8), ("check_batch", 3)]
    assert [f.function for f in second.frames][-1] == "prepare" and second.frames[-1].lineno == 10
    assert second.frames[-1].source == 'raise RuntimeError("batch setup failed") from exc'
    assert plain.exception.type == "JSONDecodeError"
    assert [(f.module, f.function) for f in plain.frames][1:] == [
        ("json", "loads"),
        ("json.decoder", "decode"),
        ("json.decoder", "raw_decode"),
    ]


@pytest.mark.parametrize("version", ["9", "7"])
def test_an_ipython_traceback_pasted_without_its_indentation_keeps_its_frames(version):
    """A paste that lost every line's leading blanks: the numbered context lines still belong
    to the traceback (the exception and every frame are read as from the original)."""
    from pathlib import Path

    log = (
        Path(__file__).resolve().parent.parent
        / "corpus"
        / "shapes"
        / f"ipython{version}-traceback.log"
    )
    text = log.read_text()
    dedented = "".join(line.lstrip(" \t") for line in text.splitlines(keepends=True))
    want = [
        (t.exception.type, [(f.function, f.lineno) for f in t.frames])
        for t in parse(text).tracebacks
    ]
    got = [
        (t.exception.type, [(f.function, f.lineno) for f in t.frames])
        for t in parse(dedented).tracebacks
    ]
    assert got == want


def test_an_ipython_module_level_frame_has_no_function_name():
    # IPython 8+ prints "File path:line" alone for module-level code (an import that raised)
    text = (
        "---------------------------------------------------------------------------\n"
        "OSError                                   Traceback (most recent call last)\n"
        "Cell In[1], line 1\n"
        "----> 1 import torch\n"
        "\n"
        "File c:\\Users\\user\\venv\\lib\\site-packages\\torch\\__init__.py:148\n"
        "    147                 err.strerror += f' Error loading \"{dll}\" or one of its dependencies.'\n"
        "--> 148                 raise err\n"
        "\n"
        "OSError: [WinError 126] The specified module could not be found.\n"
    )
    (tb,) = parse(text).tracebacks
    assert tb.exception.type == "OSError"
    assert [(f.function, f.lineno) for f in tb.frames] == [("<module>", 1), ("<module>", 148)]
    assert tb.frames[-1].source == "raise err"


PASTED_FRAMES = (
    '  File "/srv/app/serve.py", line 12, in <module>\n'
    "    main()\n"
    '  File "/srv/app/serve.py", line 9, in main\n'
    "    load_config(path)\n"
    "ValueError: unknown key 'max_len' in /srv/app/config.yaml\n"
)


@pytest.mark.parametrize(
    "above", ["```", "```text", "~~~", "...", "[... truncated ...]", "[truncated]"]
)
def test_frames_pasted_without_their_header_under_a_fence_or_a_cut_mark(above):
    text = "The server exits at start-up; the end of its output:\n\n" + above + "\n" + PASTED_FRAMES
    (tb,) = parse(text).tracebacks
    assert tb.exception.type == "ValueError"
    assert [f.function for f in tb.frames] == ["<module>", "main"]


def test_frames_under_an_ordinary_line_are_no_traceback_of_their_own():
    text = "line one\nline two\nline three\nthe stack was:\n" + PASTED_FRAMES
    assert parse(text).tracebacks == []


def test_ipython_skipped_similar_frames_do_not_end_its_traceback():
    text = (
        "---------------------------------------------------------------------------\n"
        "TypeError                                 Traceback (most recent call last)\n"
        "Cell In[4], line 2\n"
        "      1 trainer = Trainer(model=model, args=args)\n"
        "----> 2 trainer.train()\n"
        "\n"
        "File /opt/conda/lib/python3.11/site-packages/transformers/trainer.py:3759, in Trainer.compute_loss(self, model, inputs)\n"
        "-> 3759 outputs = model(**inputs)\n"
        "\n"
        "[... skipping similar frames: Module._call_impl at line 1750 (1 times), Module._wrapped_call_impl at line 1739 (1 times)]\n"
        "\n"
        "File /opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py:1750, in Module._call_impl(self, *args, **kwargs)\n"
        "-> 1750     return forward_call(*args, **kwargs)\n"
        "\n"
        "    [... skipping hidden 1 frame]\n"
        "\n"
        "TypeError: ViTModel.forward() got an unexpected keyword argument 'num_items_in_batch'\n"
    )
    (tb,) = parse(text).tracebacks
    assert tb.exception.type == "TypeError" and "num_items_in_batch" in tb.exception.message
    assert [f.function for f in tb.frames] == ["<module>", "compute_loss", "_call_impl"]


def test_colab_folded_frames_do_not_end_an_ipython_traceback():
    text = (
        "---------------------------------------------------------------------------\n"
        "RuntimeError                              Traceback (most recent call last)\n"
        "<ipython-input-7-3d62c575fcfd> in <cell line: 1>()\n"
        "----> 1 trainer_stats = trainer.train()\n"
        "\n"
        "34 frames\n"
        "/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py in compile(src, target, options)\n"
        "    283     codegen_fns = backend.get_codegen_implementation()\n"
        "--> 284     next_module = compile_ir(module, metadata)\n"
        "\n"
        "RuntimeError: Internal Triton PTX codegen error\n"
    )
    (tb,) = parse(text).tracebacks
    assert [f.function for f in tb.frames] == ["<cell line: 1>", "compile"]
    assert tb.exception.type == "RuntimeError" and not tb.truncated


_INDENTED = [
    # a plain traceback with carets
    'Traceback (most recent call last):\n  File "/app/run.py", line 8, in <module>\n'
    "    main()\n    ^^^^^^\n"
    '  File "/app/run.py", line 5, in main\n    load(path).cuda()\n'
    '  File "/opt/py/site-packages/torch/cuda/__init__.py", line 372, in _lazy_init\n'
    "    torch._C._cuda_init()\n"
    "RuntimeError: No CUDA GPUs are available\n",
    # a logger prefix on the header only (SGLang), a call without arguments as a source line
    "[2026-03-04 09:11:08 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/lib/sglang/srt/managers/scheduler.py", line 3130, in run_scheduler_process\n'
    "    scheduler.event_loop()\n"
    '  File "/usr/lib/sglang/srt/distributed/utils.py", line 23, in ensure_divisibility\n'
    "    assert numerator % denominator == 0\n"
    "AssertionError: 16 is not divisible by 6\n",
    # frames without source lines (frozen modules), a bare exception name
    'Traceback (most recent call last):\n  File "<frozen runpy>", line 198, in _run_module_as_main\n'
    '  File "<frozen runpy>", line 88, in _run_code\n  File "/app/loop.py", line 3, in <module>\n'
    "    while True: step()\nKeyboardInterrupt\n",
]


@pytest.mark.parametrize("text", _INDENTED, ids=["carets", "prefixed-header", "frozen-frames"])
def test_a_traceback_that_lost_its_indentation_parses_like_the_original(text):
    """A paste into an issue or a chat often loses every line's leading blanks."""

    def shape(t):
        tb = t.tracebacks[0]
        return (
            tb.start_line,
            tb.end_line,
            tb.exception.type,
            tb.exception.message,
            [(f.file, f.lineno, f.function) for f in tb.frames],
        )

    flat = "\n".join(line.lstrip() for line in text.split("\n"))
    assert shape(parse(flat)) == shape(parse(text))
    assert len(parse(flat).tracebacks) == 1


@pytest.mark.parametrize(
    "tail,message_end",
    [
        # raise ImportError("\n" + ...): every paragraph is the message
        (
            ["", "Attempted locations:", "1. /opt/lib/common_ops.so", "", "Please reinstall"],
            "Please reinstall",
        ),
        # the program's next output ends it: a shell prompt, another traceback
        (["", "$ nvidia-smi"], "Could not load the library"),
        (
            [
                "",
                "Traceback (most recent call last):",
                '  File "b.py", line 1, in <module>',
                "OSError: x",
            ],
            "Could not load the library",
        ),
    ],
    ids=["paragraphs", "then-a-prompt", "then-a-traceback"],
)
def test_a_message_that_starts_with_a_line_break_keeps_its_paragraphs(tail, message_end):
    lines = [
        "Traceback (most recent call last):",
        '  File "a.py", line 3, in <module>',
        "    raise ImportError(msg)",
        "ImportError: ",
        "Could not load the library",
        *tail,
    ]
    tb = parse_records(records_from_text("\n".join(lines)))[0]
    assert tb.exception.type == "ImportError"
    assert tb.exception.message.rstrip().endswith(message_end)
    assert "Could not load the library" in tb.exception.message


@pytest.mark.parametrize(
    "after",
    [
        "Processed prompts:   0%|          | 0/200 [00:00<?, ?it/s]",
        "100%|##########| 2/2 [00:01<00:00,  1.10it/s]",
        "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01,  1.10s/it]",
        "Killing subprocess 14681",
        "srun: error: gpu-n07: task 0: Exited with exit code 1",
        "slurmstepd: error: *** STEP 4412.0 ON gpu-n07 CANCELLED AT 2025-03-02T10:41:09 ***",
        "+ exit 1",
        "+ status=1",
        "PASSED                                                                   [ 33%]",
        "tests/test_client.py::test_disconnect_aborts PASSED                     [ 66%]",
    ],
    ids=[
        "tqdm-with-description",
        "tqdm-bare",
        "vllm-shards",
        "torch-1-launcher",
        "srun",
        "slurmstepd",
        "set-x",
        "set-x-assignment",
        "pytest-result",
        "pytest-test-and-result",
    ],
)
def test_a_progress_bar_after_an_exception_is_not_its_message(after):
    """Nor a launcher's line about the process (torch 1.x's launcher, Slurm's srun and
    slurmstepd)."""
    lines = [
        "Traceback (most recent call last):",
        '  File "a.py", line 3, in <module>',
        "    model_executable = self.graph_runners[graph_batch_size]",
        "KeyError: 72",
        after,
    ]
    tb = parse_records(records_from_text("\n".join(lines)))[0]
    assert (tb.exception.type, tb.exception.message) == ("KeyError", "72")


# --- pytest's failure reports (real output of pytest 8 with each --tb style, and of pytest-xdist's
# workers, in corpus/shapes) ---


@pytest.mark.parametrize("style", ["auto", "short", "long", "native", "xdist"])
def test_pytest_reports_parse_like_plain_tracebacks(style):
    from pathlib import Path

    log = Path(__file__).resolve().parent.parent / "corpus" / "shapes" / f"pytest-tb-{style}.log"
    chained, missing, compared = parse(log.read_bytes()).tracebacks
    cause, raised = chained.segments
    assert (cause.exception.type, raised.link, raised.exception.type) == (
        "AssertionError",
        "cause",
        "RuntimeError",
    )
    assert cause.exception.message == "global batch 16 is not micro batch 8 times world size 1"
    assert raised.exception.message == "batch setup failed"  # not the next test's title
    assert [(f.function, f.lineno) for f in cause.frames][-2:] == [
        ("prepare", 9),
        ("check_batch", 2),
    ]
    assert [(f.function, f.lineno) for f in raised.frames][-2:] == [
        ("test_prepare", 8),
        ("prepare", 11),
    ]
    assert raised.frames[-1].source == 'raise RuntimeError("batch setup failed") from exc'
    assert (missing.exception.type, missing.exception.message) == ("KeyError", "'3'")
    assert [f.function for f in missing.frames][-2:] == ["test_shard", "load_shard"]
    # an assertion pytest rewrote: its type comes from the location line (or the "assert")
    assert compared.exception.type == "AssertionError"
    assert compared.exception.message.split("\n")[0] == "assert 3 == 4"
    assert compared.frames[-1].function == "test_sum"


def test_a_pytest_title_at_the_full_width_is_not_a_cut_line():
    # a log whose longest lines are pytest's 80-column rules is not a log cut at 80 columns:
    # the title stays its own line and the entry below it is read
    title = "_" * 30 + " test_shard " + "_" * 38
    rule = "=" * 30 + " short test summary info " + "=" * 25
    text = "\n".join(
        [
            "=" * 35 + " FAILURES " + "=" * 35,
            title,
            "tests/test_batching.py:12: in test_shard",
            "    data = load_shard(3)",
            "shapes/batching.py:16: in load_shard",
            "    return shards[str(index)]",
            "E   KeyError: '3'",
            rule,
            "FAILED tests/test_batching.py::test_shard - KeyError: '3'",
            "=" * 29 + " 1 failed in 0.31s " + "=" * 32,
        ]
    )
    assert {len(t) for t in text.splitlines()[:2]} == {80}
    (tb,) = parse(text).tracebacks
    assert (tb.exception.type, tb.exception.message) == ("KeyError", "'3'")
    assert [(f.function, f.lineno) for f in tb.frames] == [("test_shard", 12), ("load_shard", 16)]


def test_a_title_of_underscores_without_pytest_locations_changes_nothing():
    text = (
        "______ Training ______\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/train.py", line 3, in <module>\n'
        "    main()\n"
        "ValueError: bad value\n"
    )
    (tb,) = parse(text).tracebacks
    assert (tb.exception.type, [f.function for f in tb.frames]) == ("ValueError", ["<module>"])


def test_a_structured_loggers_next_record_ends_an_exception_message():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app.py", line 3, in <module>\n'
        "    main()\n"
        "RuntimeError: Failed to find C compiler. Please specify via CC environment variable.\n"
        '{"timestamp": "2025-05-01T10:00:00Z", "level": "error", "message": "job failed"}\n'
    )
    (tb,) = parse(text).tracebacks
    assert tb.exception.message == (
        "Failed to find C compiler. Please specify via CC environment variable."
    )


# --- loguru's tracebacks (real output of loguru 0.7, with and without diagnose, in corpus/shapes)


@pytest.mark.parametrize("name", ["loguru-traceback", "loguru-traceback-diagnose"])
def test_loguru_tracebacks_parse_like_plain_ones(name):
    from pathlib import Path

    log = Path(__file__).resolve().parent.parent / "corpus" / "shapes" / f"{name}.log"
    logged, raised = parse(log.read_bytes()).tracebacks
    assert (logged.exception.type, logged.exception.message) == (
        "LookupError",
        "no handler registered for kind demo",
    )
    # the frame loguru marks with ">" (where the exception was caught) is a frame like the others
    assert [(f.function, f.lineno) for f in logged.frames] == [
        ("<module>", 31),
        ("serve", 24),
        ("serve_inner", 16),
        ("get_model", 11),
    ]
    assert logged.frames[2].source == "model = get_model(sharded)"  # not the values below it
    assert [s.exception.type for s in raised.segments] == ["LookupError", "RuntimeError"]


def _aiter_history() -> str:
    """What AITER's failed JIT build logs: the tag, then "-->".join(format_exception(...))."""
    import sys
    import traceback as tb

    def build():
        raise KeyError("module_aiter_enum")

    try:
        try:
            build()
        except KeyError as exc:
            raise AttributeError(
                "module 'torch._C' has no attribute '_PYBIND11_BUILD_ABI'"
            ) from exc
    except AttributeError:
        history = "-->".join(tb.format_exception(*sys.exc_info()))
    tag = "failed jit build [module_aiter_enum]"
    return (
        f"[aiter] {tag}\u2193\u2193\u2193\n-->[History]: {history}[aiter] {tag}\u2191\u2191\u2191\n"
    )


@pytest.mark.parametrize("prefix", ["", "(EngineCore_DP0 pid=4029) "])
def test_aiter_history_arrows_are_peeled(prefix):
    text = "".join(prefix + line for line in _aiter_history().splitlines(keepends=True))
    assert "\n" + prefix + "-->AttributeError: module" in text  # the shape being read
    (tb,) = parse(text).tracebacks
    cause, raised = tb.segments
    assert (cause.exception.type, cause.exception.message) == ("KeyError", "'module_aiter_enum'")
    assert raised.link == "cause"
    assert raised.exception.type == "AttributeError"
    first = raised.exception.message.split("\n")[0]  # the tag's closing line may run on after it
    assert first.endswith("no attribute '_PYBIND11_BUILD_ABI'")
    assert [f.function for f in cause.frames][-1] == "build"


RAY_CHAIN = """\
Traceback (most recent call last):
  File "/srv/venv/lib/python3.11/site-packages/urllib3/response.py", line 748, in _error_catcher
    yield
urllib3.exceptions.IncompleteRead: IncompleteRead(4752 bytes read, 797 more expected)

The above exception was the direct cause of the following exception:

ray::RayWorkerWrapper.execute_method() (pid=29208, ip=10.0.0.3, actor_id=67a151b2, repr=<vllm.executor.ray_utils.RayWorkerWrapper object at 0x7f00a0>)
  File "/srv/venv/lib/python3.11/site-packages/requests/models.py", line 822, in generate
    raise ChunkedEncodingError(e)
requests.exceptions.ChunkedEncodingError: ('Connection broken: IncompleteRead(4752 bytes read, 797 more expected)', IncompleteRead(4752 bytes read, 797 more expected))
"""


def test_a_ray_task_header_after_a_chain_line_starts_the_chains_next_segment():
    (tb,) = parse(RAY_CHAIN).tracebacks
    cause, raised = tb.segments
    assert cause.exception.type == "urllib3.exceptions.IncompleteRead"
    assert raised.link == "cause"
    assert raised.exception.type == "requests.exceptions.ChunkedEncodingError"
    assert [f.function for f in raised.frames] == ["generate"]

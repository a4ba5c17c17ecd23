"""bytes -> records: decoding, line splitting, envelopes (tables of cases)."""

from __future__ import annotations

import codecs

import pytest

from tracelens.read.logread import peel, records_from_bytes

ENVELOPES = [
    # (line, text, stream, level, source)
    # a time without a date before the level (logging's datefmt "%H:%M:%S", kohya_ss), and
    # rich's RichHandler with its day/month/year date
    (
        "17:22:50-122539 ERROR    Could not load torch: cuDNN version incompatibility",
        "Could not load torch: cuDNN version incompatibility",
        "",
        "ERROR",
        None,
    ),
    ("09:14:03 WARNING flash-attn not found", "flash-attn not found", "", "WARNING", None),
    (
        "[12/01/24 17:22:50] ERROR    Failed to load the model                 app.py:41",
        "Failed to load the model                 app.py:41",
        "",
        "ERROR",
        None,
    ),
    # Python logging's "%(asctime)s - %(levelname)s - %(message)s" (no logger name)
    (
        "2025-01-09 00:28:10,123 - ERROR - Error starting router: worker_urls is empty",
        "Error starting router: worker_urls is empty",
        "",
        "ERROR",
        None,
    ),
    # a lowercase level in brackets right before the message
    (
        "2025-10-09 08:58:51.240 [error]Please install vllm[audio] for audio support",
        "Please install vllm[audio] for audio support",
        "",
        "ERROR",
        None,
    ),
    # logfmt (logrus): the level in lowercase, the message in its quotes
    (
        'time="2025-01-09T00:28:10Z" level=error msg="error executing nvidia-container-runtime-hook"',
        '"error executing nvidia-container-runtime-hook"',
        "",
        "ERROR",
        None,
    ),
    (
        'level=fatal msg="Error starting nv-hostengine: DCGM initialization error"',
        '"Error starting nv-hostengine: DCGM initialization error"',
        "",
        "FATAL",
        None,
    ),
    # LMDeploy's TurboMind logger, with the time and the source in newer releases
    (
        "[TM][FATAL] kernels/gemm/tuner/measurer.cu(83): Check failed: status == cudaSuccess",
        "kernels/gemm/tuner/measurer.cu(83): Check failed: status == cudaSuccess",
        "",
        "FATAL",
        None,
    ),
    (
        "[TM][FATAL][0914.14:00:37.807188][cast.cu:264] CUDA error: no kernel image is available",
        "CUDA error: no kernel image is available",
        "",
        "FATAL",
        "cast.cu:264",
    ),
    (
        "[TM][WARNING] [LlamaTritonModel] `max_context_token_num` is not set, default to 8192.",
        "[LlamaTritonModel] `max_context_token_num` is not set, default to 8192.",
        "",
        "WARNING",
        None,
    ),
    # TensorRT's loggers: trtexec, the Python API's trt.Logger, TensorRT-LLM
    (
        "[09/02/2024-10:14:24] [E] [TRT] ModelImporter.cpp:954: ERROR: onnxOpImporters.cpp:6315",
        "ModelImporter.cpp:954: ERROR: onnxOpImporters.cpp:6315",
        "",
        "ERROR",
        None,
    ),
    (
        "[06/20/2022-11:10:38] [TRT] [E] 4: [runtime.cpp::deserializeCudaEngine::50] Error Code 4",
        "4: [runtime.cpp::deserializeCudaEngine::50] Error Code 4",
        "",
        "ERROR",
        "TRT",
    ),
    (
        "[01/23/2026-04:43:47] [TRT-LLM] [W] Overriding max_num_tokens",
        "Overriding max_num_tokens",
        "",
        "WARNING",
        "TRT-LLM",
    ),
    (
        "[09/02/2024-10:14:21] [V] [TRT] Registered plugin creator",
        "Registered plugin creator",
        "",
        "DEBUG",
        None,
    ),
    # Python logging's default format with a logger name holding hyphens (llama.cpp's converter)
    (
        "ERROR:hf-to-gguf:Model TinyLMForCausalLM is not supported",
        "Model TinyLMForCausalLM is not supported",
        "",
        "ERROR",
        "hf-to-gguf",
    ),
    # Open MPI --timestamp-output with --tag-output: the date, then the rank's tag
    (
        "Thu Jan 23 11:55:50 2025[1,1]<stderr>:RuntimeError: CUDA error: out of memory",
        "RuntimeError: CUDA error: out of memory",
        "1,1",
        None,
        None,
    ),
    (
        "Mon Mar  3 09:01:02 2025[1,0]<stdout>:[rank0] step 10 loss 2.31",
        "[rank0] step 10 loss 2.31",
        "1,0",
        None,
        None,
    ),
    (
        "E           torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
        "",
        None,
        None,
    ),
    ("E   AssertionError: assert 3 == 4", "AssertionError: assert 3 == 4", "", None, None),
    (
        "[11/23 14:09:17 d2.engine.hooks]: Overall training speed: 1497 iterations in 0:12:41",
        "Overall training speed: 1497 iterations in 0:12:41",
        "",
        None,
        "d2.engine.hooks",
    ),
    (
        "ERROR [11/23 14:09:18 d2.engine.train_loop]: Exception during training:",
        "Exception during training:",
        "",
        "ERROR",
        "d2.engine.train_loop",
    ),
    # KServe's model server logger, and uvicorn's under KServe's configuration
    (
        "2024-09-05 14:21:37.902 1 kserve ERROR [__main__.py:<module>():259] Failed to start model server: integer division or modulo by zero",
        "Failed to start model server: integer division or modulo by zero",
        "",
        "ERROR",
        "kserve",
    ),
    (
        "2024-09-05 14:21:40.118 1 uvicorn.error INFO:     Started server process [1]",
        "Started server process [1]",
        "",
        "INFO",
        "uvicorn.error",
    ),
    # Ray Serve's components: the level, the time, the component and its id (a replica's
    # request id too), "-- ", the message; older Ray the file and line with " - "
    (
        "(ServeController pid=2144) WARNING 2025-04-22 13:40:41,252 controller 2144 -- Deployment 'm' in application 'default' has 1 replicas that have taken more than 30s to be scheduled.",
        "Deployment 'm' in application 'default' has 1 replicas that have taken more than 30s to be scheduled.",
        "ServeController pid=2144",
        "WARNING",
        "controller",
    ),
    (
        "INFO 2025-08-29 18:02:21,118 default_LLMRouter bvvqsqc0 9f1c3e7a-2b5d-4f8e-a0c6-1d3b5e7f9a2c -- POST /v1/chat/completions 200 1874.3ms",
        "POST /v1/chat/completions 200 1874.3ms",
        "",
        "INFO",
        "default_LLMRouter",
    ),
    (
        "INFO 2024-11-18 01:46:34,210 default_VLLMDeployment ujj4diu5 replica.py:893 - Started initializing replica.",
        "Started initializing replica.",
        "",
        "INFO",
        "default_VLLMDeployment",
    ),
    # TensorFlow's C++ logging (also XLA's and, in brackets, Horovod's)
    (
        "2023-06-26 07:22:58.476822: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'",
        "Could not load dynamic library 'libcudart.so.11.0'",
        "",
        "WARNING",
        "tensorflow/stream_executor/platform/default/dso_loader.cc:64",
    ),
    # Open MPI's tag, then Horovod's stall report listing a rank: no Slurm task label
    (
        "[0]<stderr>:[2023-06-26 07:22:58.476822: W /tmp/h/horovod/common/stall_inspector.cc:107] One or more tensors were submitted",
        "One or more tensors were submitted",
        "0",
        "WARNING",
        "/tmp/h/horovod/common/stall_inspector.cc:107",
    ),
    (
        "[0]<stderr>:1: [broadcast.conv.bias, broadcast.conv.weight ...]",
        "1: [broadcast.conv.bias, broadcast.conv.weight ...]",
        "0",
        None,
        None,
    ),
    # Rust's tracing (TGI, TEI, routers): the level, the spans, the crate's path, the source file
    (
        "2024-06-03T14:02:42.548213Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 7 rank=1",
        "Shard process was signaled to shutdown with signal 7 rank=1",
        "",
        "ERROR",
        "text_generation_launcher",
    ),
    (
        "2025-04-29T08:58:35.641578Z  WARN text_generation_router_v3::backend: backends/v3/src/backend.rs:39: Model supports prefill chunking.",
        "Model supports prefill chunking.",
        "",
        "WARNING",
        "text_generation_router_v3::backend",
    ),
    # LMCache's own logger: its level, the message with its "(file:line:logger)" tail
    (
        "[2025-07-21 11:31:24,622] LMCache ERROR: Failed to connect to the remote store (mooncake_connector.py:88:lmcache.v1.storage_backend)",
        "Failed to connect to the remote store (mooncake_connector.py:88:lmcache.v1.storage_backend)",
        "",
        "ERROR",
        None,
    ),
    (
        "[11/23 14:09:17] d2.engine.hooks INFO: Total training time: 0:12:43",
        "Total training time: 0:12:43",
        "",
        "INFO",
        "d2.engine.hooks",
    ),
    (
        "(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700] EngineCore failed to start.",
        "EngineCore failed to start.",
        "EngineCore_DP0 pid=245",
        "ERROR",
        "core.py:700",
    ),
    (
        '(Worker_TP0 pid=215) ERROR 01-20 13:03:50 [v1/executor/multiproc_executor.py:749]   File "x.py", line 1, in f',
        '  File "x.py", line 1, in f',
        "Worker_TP0 pid=215",
        "ERROR",
        "v1/executor/multiproc_executor.py:749",
    ),
    (
        "(VllmWorker rank=1 pid=9) INFO 02-01 10:00:00 [gpu_worker.py:10] ready",
        "ready",
        "VllmWorker rank=1 pid=9",
        "INFO",
        "gpu_worker.py:10",
    ),
    (
        "(VllmWorker TP0 pid=5) ERROR 02-01 10:00:00 [multiproc_worker_utils.py:226] Traceback (most recent call last):",
        "Traceback (most recent call last):",
        "VllmWorker TP0 pid=5",
        "ERROR",
        "multiproc_worker_utils.py:226",
    ),
    (
        '(VllmWorkerProcess pid=8) ERROR 10-18 16:04:07 multiproc_worker_utils.py:229]   File "a.py", line 1, in f',
        '  File "a.py", line 1, in f',
        "VllmWorkerProcess pid=8",
        "ERROR",
        "multiproc_worker_utils.py:229",
    ),
    (
        "(RayWorkerWrapper pid=77, ip=10.0.0.2) WARNING 02-01 10:00:00 [ray_utils.py:3] slow",
        "slow",
        "RayWorkerWrapper pid=77, ip=10.0.0.2",
        "WARNING",
        "ray_utils.py:3",
    ),
    (
        "(APIServer pid=1) INFO 09-14 08:01:14 [api_server.py:1839] vLLM API server version 0.10.2",
        "vLLM API server version 0.10.2",
        "APIServer pid=1",
        "INFO",
        "api_server.py:1839",
    ),
    (
        "[rank3]: Traceback (most recent call last):",
        "Traceback (most recent call last):",
        "rank3",
        None,
        None,
    ),
    (
        '[rank3]:   File "t.py", line 2, in <module>',
        '  File "t.py", line 2, in <module>',
        "rank3",
        None,
        None,
    ),
    (
        '[default0]:  File "t.py", line 2, in <module>',
        '  File "t.py", line 2, in <module>',
        "default0",
        None,
        None,
    ),
    (
        "[2025-01-20 13:03:50 TP0] Scheduler hit an exception: boom",
        "Scheduler hit an exception: boom",
        "TP0",
        None,
        None,
    ),
    ("[2026-11-29T03:14:12Z] NCCL WARN x", "NCCL WARN x", "", None, None),
    ("[2025-01-20 13:03:50 DP1 TP3] Load weight end.", "Load weight end.", "DP1 TP3", None, None),
    (
        "[2025-01-20 13:03:50] INFO:     Started server process [1]",
        "Started server process [1]",
        "",
        "INFO",
        None,
    ),
    (
        "2025-09-14T08:01:10.120431786Z INFO 09-14 08:01:10 [__init__.py:216] Automatically detected platform cuda.",
        "Automatically detected platform cuda.",
        "",
        "INFO",
        "__init__.py:216",
    ),
    (
        "[pod/vllm-0/vllm] 2025-09-14T08:01:10Z (APIServer pid=1) INFO 09-14 08:01:10 [a.py:1] hi",
        "hi",
        "pod/vllm-0/vllm / APIServer pid=1",
        "INFO",
        "a.py:1",
    ),
    (
        "vllm03  | (Worker_TP3 pid=2125) ERROR 07-01 11:37:06 [multiproc_executor.py:898]     x = 1",
        "    x = 1",
        "vllm03 / Worker_TP3 pid=2125",
        "ERROR",
        "multiproc_executor.py:898",
    ),
    (
        "E0120 13:03:50.123456 1234 ProcessGroupNCCL.cpp:1234] [PG 0 Rank 1] Watchdog caught collective operation timeout",
        "[PG 0 Rank 1] Watchdog caught collective operation timeout",
        "",
        "ERROR",
        "ProcessGroupNCCL.cpp:1234",
    ),
    (
        "[E1129 15:53:15.897998298 socket.cpp:1028] [c10d] The client socket has timed out",
        "[c10d] The client socket has timed out",
        "",
        "ERROR",
        "socket.cpp:1028",
    ),
    (
        "[rank0]:[W601 10:00:03.512 ProcessGroupNCCL.cpp:4561] [PG ID 0] using GPU 0",
        "[PG ID 0] using GPU 0",
        "rank0",
        "WARNING",
        "ProcessGroupNCCL.cpp:4561",
    ),
    ("ERROR:root:worker 2 exited", "worker 2 exited", "", "ERROR", "root"),
    (
        "WARNING:transformers.generation.utils:Setting pad_token_id",
        "Setting pad_token_id",
        "",
        "WARNING",
        "transformers.generation.utils",
    ),
    (
        'INFO:     127.0.0.1:51234 - "POST /v1/completions HTTP/1.1" 200 OK',
        '127.0.0.1:51234 - "POST /v1/completions HTTP/1.1" 200 OK',
        "",
        "INFO",
        None,
    ),
    (
        "2024-11-02 16:40:12,909 - app.server - ERROR - request failed",
        "request failed",
        "",
        "ERROR",
        "app.server",
    ),
    ('node-1:   File "/a.py", line 2, in f', '  File "/a.py", line 2, in f', "node-1", None, None),
    (
        "10.0.0.5: Traceback (most recent call last):",
        "Traceback (most recent call last):",
        "10.0.0.5",
        None,
        None,
    ),
    (
        "Nov 29 03:14:12 gpu-node-7 python3[48211]: Traceback (most recent call last):",
        "Traceback (most recent call last):",
        "python3[48211]",
        None,
        None,
    ),
    (
        '[1,0]<stderr>:  File "/a.py", line 2, in f',
        '  File "/a.py", line 2, in f',
        "1,0",
        None,
        None,
    ),
    ('3:   File "/a.py", line 2, in f', '  File "/a.py", line 2, in f', "3", None, None),
    ("  1234\tERROR 01-20 13:03:50 [core.py:700] boom", "boom", "", "ERROR", "core.py:700"),
    (
        "2025-06-01 10:00:00.123 | ERROR    | app.server:run:42 - request failed",
        "request failed",
        "",
        "ERROR",
        "app.server:run:42",
    ),
    ("2025-06-01T10:00:00.123Z [ERROR] something broke", "something broke", "", "ERROR", None),
    (
        "(APIServer pid=1) (EngineCore_DP0 pid=181) (Worker_TP1 pid=189) ERROR 01-29 22:59:30 [multiproc_executor.py:852] Traceback (most recent call last):",
        "Traceback (most recent call last):",
        "APIServer pid=1 / EngineCore_DP0 pid=181 / Worker_TP1 pid=189",
        "ERROR",
        "multiproc_executor.py:852",
    ),
    # the time in a column of its own (log exports): ISO or Unix time, then a tab
    (
        "2025-06-01T10:00:00.123Z\tTraceback (most recent call last):",
        "Traceback (most recent call last):",
        "",
        None,
        None,
    ),
    ("1748772000123\tERROR 01-20 13:03:50 [core.py:700] boom", "boom", "", "ERROR", "core.py:700"),
    ('1748772000.25\t  File "/a.py", line 2, in f', '  File "/a.py", line 2, in f', "", None, None),
    (
        "[2023-10-02 07:41:31,404] [INFO] [partition_parameters.py:347:__exit__] done",
        "done",
        "",
        "INFO",
        "partition_parameters.py:347:__exit__",
    ),
    # lines no format knows are kept whole
    ("200 OK", "200 OK", "", None, None),
    ("Step 3: go", "Step 3: go", "", None, None),
    ("Float8Error: bad scale", "Float8Error: bad scale", "", None, None),
    ("Note: restart needed", "Note: restart needed", "", None, None),
    (
        "collect2: fatal error: cannot find 'ld'",
        "collect2: fatal error: cannot find 'ld'",
        "",
        None,
        None,
    ),
    (
        "python3: can't open file '/srv/x.py'",
        "python3: can't open file '/srv/x.py'",
        "",
        None,
        None,
    ),
    (
        '  File "/srv/a.py", line 3, in <module>',
        '  File "/srv/a.py", line 3, in <module>',
        "",
        None,
        None,
    ),
    # PyTorch 2.1-2.2's own format: a bracketed time, the logger, the level in brackets
    (
        "[2024-06-18 23:38:49,504] torch._dynamo.convert_frame: [WARNING] Traceback (most recent call last):",
        "Traceback (most recent call last):",
        "",
        "WARNING",
        "torch._dynamo.convert_frame",
    ),
    (
        "[2024-05-24 14:20:41,650] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 0",
        "failed (exitcode: 1) local_rank: 0",
        "",
        "ERROR",
        "torch.distributed.elastic.multiprocessing.api",
    ),
    # Ray's C++ logger: "C" is its FATAL (a failed RAY_CHECK), under a worker's process tag
    (
        "(EmbedActor pid=597) [2025-09-16 09:13:19,904 C 597 647] task_receiver.cc:181: "
        "An unexpected system state has occurred. Check failed: objects_valid",
        "task_receiver.cc:181: An unexpected system state has occurred. Check failed: objects_valid",
        "EmbedActor pid=597",
        "FATAL",
        None,
    ),
    # ... at its other levels, kept as they are (the raylet goes on after its "E" lines)
    (
        "[2026-05-08 15:00:26,661 E 159 228] file_system_monitor.cc:116: /tmp/ray is over 95% full",
        "[2026-05-08 15:00:26,661 E 159 228] file_system_monitor.cc:116: /tmp/ray is over 95% full",
        "",
        None,
        None,
    ),
    # an exception line that quotes a level is no logger: its type has no dotted name before it
    ("ValueError: [ERROR] bad value", "ValueError: [ERROR] bad value", "", None, None),
    ("ValueError: bad value", "ValueError: bad value", "", None, None),
    (
        "  | ExceptionGroup: eg (2 sub-exceptions)",
        "  | ExceptionGroup: eg (2 sub-exceptions)",
        "",
        None,
        None,
    ),
    ("| 0  NVIDIA H200  On |", "| 0  NVIDIA H200  On |", "", None, None),
    ("", "", "", None, None),
]


@pytest.mark.parametrize("line,text,stream,level,source", ENVELOPES)
def test_envelope(line, text, stream, level, source):
    rec = peel(line, 7)
    assert (rec.text, rec.stream, rec.level, rec.source, rec.line) == (
        text,
        stream,
        level,
        source,
        7,
    )


DECODING = [
    # (bytes, expected (line, text) pairs)
    (b"a\nb\n", [(1, "a"), (2, "b")]),
    (b"a\r\nb\r\n", [(1, "a"), (2, "b")]),
    (b"10%\r50%\r100%\ndone\n", [(1, "10%"), (1, "50%"), (1, "100%"), (2, "done")]),
    # lines separated by a bare CR only (classic Mac OS): each its own numbered line
    (b"one\rtwo\rthree\r", [(1, "one"), (2, "two"), (3, "three")]),
    (b"one\r\rthree", [(1, "one"), (2, ""), (3, "three")]),
    (b"no newline at end", [(1, "no newline at end")]),
    (b"", []),
    (b"\n\n", [(1, ""), (2, "")]),
    (b"bad \xff\xfe utf8\n", [(1, "bad \ufffd\ufffd utf8")]),
    (b"nul\x00bytes\n", [(1, "nulbytes")]),
    (b"\x1b[1;31mERROR\x1b[0m red\n", [(1, "ERROR red")]),
    (b"\x1b]0;title\x07plain\n", [(1, "plain")]),
    (b"\x1b[2K\x1b[1Gprogress\n", [(1, "progress")]),
    (codecs.BOM_UTF8 + b"bom\n", [(1, "bom")]),
    (codecs.BOM_UTF16_LE + "wide\r\nline\r\n".encode("utf-16-le"), [(1, "wide"), (2, "line")]),
    (codecs.BOM_UTF16_BE + "big\n".encode("utf-16-be"), [(1, "big")]),
]


@pytest.mark.parametrize("data,expected", DECODING)
def test_decoding(data, expected):
    assert [(r.line, r.text) for r in records_from_bytes(data)] == expected


def test_line_of_several_megabytes_is_kept_whole():
    big = b"x" * (5 << 20)
    recs = records_from_bytes(b"start\n" + big + b"\nend\n")
    assert [r.line for r in recs] == [1, 2, 3]
    assert len(recs[1].text) == 5 << 20


def test_cr_only_log_keeps_its_evidence_and_error_lines():
    from tracelens.engine import diagnose

    log = b'INFO start\rTraceback (most recent call last):\r  File "a.py", line 1, in f\r    x()\rValueError: bad\r'
    rep = diagnose(log)
    assert rep.document.line_count == 5
    (tb,) = rep.document.tracebacks
    assert (tb.start_line, tb.exception.type, tb.exception.line) == (2, "ValueError", 5)
    assert {e.line for d in rep.diagnoses for e in d.evidence} >= {5}


_TB = [
    "Traceback (most recent call last):",
    '  File "/srv/train.py", line 9, in <module>',
    "    main()",
    "RuntimeError: NCCL error",
]
HOST_LABELS = [
    # (lines, the streams read, the texts read)
    (
        [f"node1: {t}" for t in _TB],
        ["node1"] * 4,
        _TB,
    ),
    (  # two machines, and the launcher's own lines without a label
        ["Running on node7,gpu-b", *(f"{h}: {t}" for h in ("node7", "gpu-b") for t in _TB[:2])],
        ["", "node7", "node7", "gpu-b", "gpu-b"],
        ["Running on node7,gpu-b", *_TB[:2], *_TB[:2]],
    ),
    (  # a label before an envelope: both peeled
        ["worker.example.org: (EngineCore_DP0 pid=9) ERROR 01-20 13:03:50 [core.py:7] boom"] * 3,
        ["worker.example.org / EngineCore_DP0 pid=9"] * 3,
        ["boom"] * 3,
    ),
    (  # exceptions, a compiler, a logger and a metric are not hosts
        [
            "torch._dynamo.exc.Unsupported: call_function",
            "torch._dynamo.exc.Unsupported: call_method",
            "ValueError: bad",
            "ValueError: bad",
            "python3: can't open file",
            "python3: can't open file",
            "loss: 0.52",
            "loss: 0.51",
        ],
        [""] * 8,
        None,
    ),
    (  # one line with a name is not a label
        ["node1: hello", "plain", "plain"],
        [""] * 3,
        ["node1: hello", "plain", "plain"],
    ),
    (  # TorchX's / NeMo-Run's role and replica, and the launcher's own line without one
        [
            "trainer/0 Experiments will be logged at /results/default",
            "trainer/0 srun: error: gpu-node12: task 0: Exited with exit code 1",
            "trainer/1 srun: error: gpu-node13: task 8: Exited with exit code 1",
            "trainer/1 srun: error: gpu-node13: tasks 9-15: Terminated",
            "Job 51877 finished: FAILED",
        ],
        ["trainer/0"] * 2 + ["trainer/1"] * 2 + [""],
        [
            "Experiments will be logged at /results/default",
            "srun: error: gpu-node12: task 0: Exited with exit code 1",
            "srun: error: gpu-node13: task 8: Exited with exit code 1",
            "srun: error: gpu-node13: tasks 9-15: Terminated",
            "Job 51877 finished: FAILED",
        ],
    ),
    (  # docker pull's image layers are no hosts
        [
            "3f4ca61aafcd: Pulling fs layer",
            "3f4ca61aafcd: Pull complete",
            "9c2b1e0d7a6f: Pulling fs layer",
            "9c2b1e0d7a6f: Pull complete",
        ],
        [""] * 4,
        None,
    ),
    (  # Keras's progress (steps of an epoch) is no role
        ["Epoch 1/2", "10/10 [==============================] - 2s 150ms/step - loss: 0.5"] * 2,
        [""] * 4,
        None,
    ),
]


@pytest.mark.parametrize("lines,streams,texts", HOST_LABELS)
def test_host_labels_the_log_repeats_are_peeled(lines, streams, texts):
    recs = records_from_bytes("\n".join(lines).encode())
    assert [r.stream for r in recs] == streams
    assert [r.text for r in recs] == (texts if texts is not None else lines)


def test_a_host_label_without_digits_after_a_dash_keeps_the_traceback():
    from tracelens.engine import diagnose

    log = "\n".join(f"{h}: {t}" for h in ("node100", "node101") for t in _TB).encode()
    doc = diagnose(log).document
    assert [(tb.exception.type, len(tb.frames)) for tb in doc.tracebacks] == [("RuntimeError", 1)]
    assert {s.id for s in doc.streams} == {"node100", "node101"}


WRAPPERS = [
    # collectors' line prefixes no envelope knows: the log shows them (tracelens.read.prefixes)
    ("stern", lambda i: "vllm-7d9f5c6b8-x2x4q vllm ", "vllm-7d9f5c6b8-x2x4q vllm"),
    (
        "journalctl -o short-iso",
        lambda i: f"2024-05-01T10:00:{i:02d}+0000 gpu7 python3[48211]: ",
        "gpu7 python3[48211]:",
    ),
    (
        "aws logs tail",
        lambda i: f"2024-05-01T10:00:{i:02d}.123000+00:00 algo-1-1714557600 ",
        "algo-1-1714557600",
    ),
    ("loki", lambda i: f'2024-05-01T10:00:{i:02d}Z {{container="vllm"}} ', '{container="vllm"}'),
    ("a host in brackets", lambda i: "[dgx-a] ", "[dgx-a]"),
    ("airflow", lambda i: f"[2024-05-01, 10:00:{i:02d} UTC] {{subprocess.py:93}} INFO - ", ""),
    ("skypilot", lambda i: "(head, rank=0, pid=1234) ", "(head, rank=0, pid=1234)"),
]


@pytest.mark.parametrize("name,prefix,stream", WRAPPERS, ids=[w[0] for w in WRAPPERS])
def test_a_wrapper_the_log_shows_is_peeled(name, prefix, stream):
    from tracelens.engine import parse

    lines = ["starting", *_TB]
    doc = parse("\n".join(prefix(i) + t for i, t in enumerate(lines)).encode())
    (tb,) = doc.tracebacks
    assert (tb.exception.type, tb.exception.message, len(tb.frames)) == (
        "RuntimeError",
        "NCCL error",
        1,
    )
    assert tb.streams == [stream]


_CONVERT = [f"blk.{n}.attn_norm.weight, n_dims = 1, torch.bfloat16 --> float32" for n in range(8)]


@pytest.mark.parametrize(
    "name,prefix,stream",
    [w for w in WRAPPERS if w[0] != "airflow"],
    ids=[w[0] for w in WRAPPERS if w[0] != "airflow"],
)
def test_the_same_prefix_on_every_line_is_peeled_without_a_traceback_to_show_it(
    name, prefix, stream
):
    # nothing but a bare "Killed" tells this log failed: no traceback or vLLM header shows the
    # prefix, but the same name before every line does
    from tracelens.engine import diagnose

    log = "\n".join(prefix(i) + t for i, t in enumerate([*_CONVERT, "Killed"])).encode()
    rep = diagnose(log)
    assert rep.document.records[-1].text == "Killed"
    assert rep.document.records[-1].stream == stream
    assert rep.diagnoses[0].rule_id == "system/host-oom-killed"


@pytest.mark.parametrize(
    "lines",
    [
        # the program's own words at every line's start
        [f"Epoch 1 step {n} loss 0.{n}" for n in range(8)],
        # NCCL's own prefix: the process each line comes from
        [f"node-1:2345:2390 [0] NCCL INFO line {n}" for n in range(8)],
        # a prefix on too few of the lines
        [*(f"pod-a main {n}" for n in range(4)), *(f"other {n}" for n in range(4))],
    ],
)
def test_a_common_start_that_is_not_a_collector_prefix_is_kept(lines):
    from tracelens.read.logread import peel
    from tracelens.read.prefixes import constant_prefix

    assert constant_prefix(list(enumerate(lines)), peel) == ""


@pytest.mark.parametrize(
    "lines",
    [
        # an exception group's "  | " is drawing, not a wrapper
        ["  + Exception Group Traceback (most recent call last):", *(f"  | {t}" for t in _TB)],
        # a message that quotes a traceback header: the next line does not start like it
        ["worker said: Traceback (most recent call last): see above", "all done"],
    ],
)
def test_what_is_not_a_wrapper_is_left(lines):
    from tracelens.read.prefixes import learn

    assert learn(records_from_bytes("\n".join(lines).encode())) is None


def test_colour_sequences_a_syslog_daemon_escaped_are_removed():
    line = (
        "Apr  3 17:41:06 gpu-node07 llmsvc[140320]: #033[1;36m(VllmWorker rank=2 pid=140320)"
        "#033[0;0m ERROR 04-03 17:41:06 [multiproc_executor.py:379] Traceback (most recent call last):"
    )
    (rec,) = records_from_bytes(line.encode())
    assert (rec.stream, rec.level, rec.text) == (
        "llmsvc[140320] / VllmWorker rank=2 pid=140320",
        "ERROR",
        "Traceback (most recent call last):",
    )


def test_a_log_of_json_lines_is_read_from_the_text_they_hold():
    import json

    from tracelens.engine import parse

    docker = "\n".join(
        json.dumps({"log": t + "\n", "stream": "stderr", "time": "2025-09-14T08:01:10.1Z"})
        for t in ["INFO 09-14 08:01:10 [api_server.py:1] starting", *_TB]
    )
    (tb,) = parse(docker.encode()).tracebacks
    assert (tb.exception.type, len(tb.frames), tb.start_line) == ("RuntimeError", 1, 2)
    structured = json.dumps(
        {"level": "error", "message": "step failed", "exc_info": "\n".join(_TB)}
    )
    doc = parse(structured.encode())
    assert (doc.records[0].text, doc.records[0].level) == ("step failed", "ERROR")
    (tb,) = doc.tracebacks
    assert tb.exception.type == "RuntimeError"
    # a line that is not an object, in a log of objects, is kept as it is
    mixed = docker + "\nSegmentation fault (core dumped)"
    assert parse(mixed.encode()).records[-1].text == "Segmentation fault (core dumped)"


def test_a_wrapper_keeps_the_indentation_of_the_lines_it_wraps():
    from tracelens.engine import parse

    lines = ["  0%|          | 0/1500 [00:00<?, ?it/s]" + _TB[0], *_TB[1:]]
    doc = parse("\n".join("trainer-0 main " + t for t in lines).encode())
    (tb,) = doc.tracebacks
    assert (tb.exception.type, len(tb.frames)) == ("RuntimeError", 1)
    assert doc.records[1].text == _TB[1]  # "  File ...": its two spaces kept


def _cut(lines: list[str], width: int) -> str:
    return "\n".join(ln[i : i + width] for ln in lines for i in range(0, max(1, len(ln)), width))


LONG_TB = [
    "W1201 10:00:03.512000 4242 torch/distributed/elastic/multiprocessing/redirects.py:29] NOTE: Redirects are currently not supported in Windows or MacOs.",
    "Traceback (most recent call last):",
    '  File "/home/user/miniconda3/envs/train/lib/python3.10/site-packages/torch/distributed/run.py", line 919, in main',
    "    run(args)",
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
]


@pytest.mark.parametrize("width", [80, 120])
def test_lines_a_console_cut_at_its_width_are_joined(width):
    from tracelens.engine import parse

    doc = parse(_cut(LONG_TB, width).encode())
    (tb,) = doc.tracebacks
    assert (tb.exception.type, tb.exception.message) == (
        "torch.distributed.DistNetworkError",
        LONG_TB[-1].split(": ", 1)[1],
    )
    assert tb.frames[0].file.endswith("torch/distributed/run.py")


def test_a_whole_line_as_long_as_the_width_is_not_joined_to_the_next_record():
    from tracelens.engine import parse

    tag = "(APIServer pid=1) "
    code = '    raise ValueError("Async scheduling is not supported with "'
    frame = '  File "/srv/venv/lib/python3.12/site-packages/vllm/engine/arg_utils.py", line 1296, in create_engine_config'
    lines = [tag + t for t in [*LONG_TB[1:4], frame]]
    lines += [tag + code, tag + "ValueError: " + "x" * 90]
    text = _cut(lines, 80)
    assert tag + code in text.splitlines() and len(tag + code) == 80  # a whole line, as wide
    (tb,) = parse(text.encode()).tracebacks
    assert (tb.exception.type, tb.exception.message) == ("ValueError", "x" * 90)
    assert tb.frames[-1].source == code.strip()


def test_long_lines_of_one_length_that_is_no_console_width_are_left_alone():
    from tracelens.read.rewrap import join_cut_lines

    # device-side assert lines of one thread each: the same length, not a cut
    lines = [
        (
            n,
            f"/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1289: block: [{n},0,0], thread: [{n},0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
        )
        for n in range(10, 40)
    ]
    assert join_cut_lines(lines) == lines


def test_a_box_drawn_to_the_console_width_is_not_a_cut_line():
    from tracelens.read.rewrap import join_cut_lines

    box = [
        (1, "╭" + "─" * 98 + "╮"),
        *((n, "│ " + f"frame {n}".ljust(96) + " │") for n in range(2, 9)),
        (9, "╰" + "─" * 98 + "╯"),
    ]
    lines = [*box, (10, "RuntimeError: boom")]
    assert join_cut_lines(lines) == lines


@pytest.mark.parametrize(
    "make",
    [
        lambda n: f"step {n:>5} " + "y" * 109,  # generated lines of one length
        lambda n: f"INFO 01-20 13:0{n % 10}:00 [core.py:{n:>3}] " + "x" * 86,  # a logger's
    ],
)
def test_whole_lines_that_share_a_console_width_are_not_joined(make):
    from tracelens.read.rewrap import join_cut_lines

    lines = [(n, make(n)) for n in range(1, 60)]
    assert {len(t) for _, t in lines} == {120}
    assert join_cut_lines(lines) == lines


def test_apc_strings_are_removed():
    # Buildkite stamps each line of a raw log with an APC string: ESC _ bk;t=... BEL
    recs = records_from_bytes(b"\x1b_bk;t=1571040000110\x07RuntimeError: boom\n")
    assert recs[0].text == "RuntimeError: boom"


def test_gitlab_section_markers_are_dropped():
    raw = (
        b"\x1b[0Ksection_start:1714557600:step_script\r\x1b[0KExecuting step_script\n"
        b"ValueError: bad value\n"
        b"\x1b[0Ksection_end:1714557700:step_script\r\x1b[0K\n"
    )
    texts = [r.text for r in records_from_bytes(raw)]
    assert not any("section_" in t for t in texts)
    assert "ValueError: bad value" in texts


_LOKI = '{app="vllm", pod="vllm-0"} '
_NEWEST_FIRST = [
    f"2026-06-19T07:55:15Z {_LOKI}RuntimeError: Engine core initialization failed.",
    f'2026-06-19T07:55:15Z {_LOKI}  File "/usr/local/bin/vllm", line 10, in <module>',
    f"2026-06-19T07:55:15Z {_LOKI}Traceback (most recent call last):",
    f"2026-06-19T07:55:14Z {_LOKI}INFO 06-19 07:55:14 [core.py:1] loading",
]


def test_a_listing_of_the_newest_line_first_is_read_in_time_order():
    # logcli query prints the newest line first: tracebacks come out upside down
    from tracelens.engine import parse

    doc = parse("\n".join(_NEWEST_FIRST) + "\n")
    assert [r.line for r in doc.records] == [1, 2, 3, 4]
    assert doc.records[0].text.endswith("loading")
    assert [tb.exception.type for tb in doc.tracebacks if tb.exception] == ["RuntimeError"]


@pytest.mark.parametrize(
    "lines",
    [
        list(reversed(_NEWEST_FIRST)),  # oldest first already
        [ln.replace("07:55:14", "07:55:15") for ln in _NEWEST_FIRST],  # one time: no order shown
        [*_NEWEST_FIRST[:3], _NEWEST_FIRST[3].replace("14Z", "14.5+00:00")],  # two formats
        [*_NEWEST_FIRST, "a line no collector wrote"],
    ],
    ids=["oldest-first", "one-time", "two-formats", "a-line-without-time"],
)
def test_any_other_log_keeps_its_order(lines):
    from tracelens.read.prefixes import time_ordered

    numbered = list(enumerate(lines, 1))
    assert time_ordered(numbered) == numbered

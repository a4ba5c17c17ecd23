"""The failure lines that need no rule (:mod:`tracelens.read.failures` searches a log for them):
what real programs print when they fail, each shape with the sample lines it was written from
(with the native crashes of :mod:`tracelens.read.crash_shapes` and the job launches of
:mod:`tracelens.read.launch_shapes` in their places). Standard library only: the scanner of large logs imports it before the rest of tracelens."""

from __future__ import annotations

from tracelens.read.crash_shapes import CRASH_SHAPES
from tracelens.read.launch_shapes import LAUNCH_SHAPES
from tracelens.read.shape import Shape

__all__ = ["SHAPES", "Shape"]


SHAPES: tuple[Shape, ...] = (
    Shape(
        "killed",
        r"^Killed\s*$|\bexit(?:ed with)? code:? (?:-9|137)\b|\bexitcode\s*:\s*-9\b|\bnon-zero exit status (?:-9|137)\b|"
        r"\bOOMKilled\b|\bSignal 9 \(SIGKILL\)|\bsignal 9\b.*\bkill|\bOut of memory: Killed process \d+|\boom_kill event\b|"
        r"\bcode=killed, status=(?:9|KILL)\b|\bKilled signal terminated program\b|"
        # DeepSpeed's launcher; the shell's report of a job; "Killed" after a progress bar; mpirun
        r"\bexits with return code = -9\b|: line \d+:\s+\d+ Killed\b|^\[\d+\][+-]?\s+Killed\s|\]Killed\s*$|"
        r"\bexited on signal 9 \(Killed\)",
        (
            "Killed",
            "ERROR: process exited with code 137",
            "  exitcode  : -9 (pid: 4155)",
            "subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status -9.",
            "    Reason:       OOMKilled",
            "torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 4156 closing signal SIGTERM ... Signal 9 (SIGKILL) received by PID 4155",
            "[12345.678901] Out of memory: Killed process 4155 (python3) total-vm:123456789kB",
            "vllm.service: Main process exited, code=killed, status=9/KILL",
            "Dec 01 10:12:13 node-1 kernel: oom_kill event in memory cgroup",
            "c++: fatal error: Killed signal terminated program cc1plus",
            "[2023-06-08 10:21:35,163] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py', '--local_rank=7'] exits with return code = -9",
            "run.sh: line 5: 12989 Killed                  python src/cli_demo.py --model_name_or_path /models/chat-34b",
            "[1]+  Killed                  python train.py --config base.yaml",
            "Loading checkpoint shards:  75%|███████▌  | 3/4 [00:08<00:02,  2.83s/it]Killed",
            "mpirun noticed that process rank 1 with PID 0 on node worker-2 exited on signal 9 (Killed).",
        ),
        triggers=(
            b"Killed",
            b"exit code",
            b"with code",
            b"exitcode",
            b"exit status",
            b"SIGKILL",
            b"Out of memory: Killed",
            b"oom_kill",
            b"code=killed",
            b"return code = -9",
            b"signal 9 (Killed)",
        ),
    ),
    Shape(
        "cuda",
        r"\bCUDA error(?: \w+)?(?: \(\d+\))?(?: \([^()\s]+:\d+\))?(?: at [^:\s]+:\d+)?: |\bcuda runtime error \(\d+\)|"
        r"\bCUDA_ERROR_[A-Z_]+\b|\bCUDA driver error: |\bCuda failure\b|\bcudaError[A-Z]\w+\b|\bcuda[A-Z]\w+ returned \d+\b|"
        # the runtime's own words for an error (cudaGetErrorString), whatever printed them
        r"\bno kernel image is available for execution on the device\b|"
        r"\ban illegal (?:memory access|instruction) was encountered\b|\bdevice-side assert triggered\b|"
        r"\bunspecified launch failure\b|\[HIP error\]|\bTest CUDA failure \S+:\d+|"  # nccl-tests' CUDACHECK
        r"\bhipError(?:NoBinaryForGpu|InvalidDeviceFunction|IllegalAddress|LaunchFailure|InvalidValue|"
        r"NoDevice|InvalidDevice|NotInitialized|SharedObjectInitFailed|AssertionFailed)\b|"
        r"\bHSA_STATUS_ERROR_[A-Z_]+\b",  # ROCm's runtime (rocminfo, the HIP runtime's HSA calls)
        (
            "CUDA error cudaErrorNoKernelImageForDevice (209) at kernel.cu:37: no kernel image is available for execution on the device",
            "CUDA error: an illegal memory access was encountered",
            "CUDA error (209) at main.cu:12: no kernel image is available for execution on the device",
            "CUDA error (/src/flash-attention/hopper/flash_fwd_launch_template.h:188): invalid argument",
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=100 : cuda runtime error (100) : no CUDA-capable device is detected",
            "node-1:2345:2390 [0] include/alloc.h:103 NCCL WARN Cuda failure 'out of memory'",
            "CUDA driver error: device not ready",
            "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.",
            "gpu-node-7: Test CUDA failure common.cu:1081 'CUDA-capable device(s) is/are busy or unavailable'",
            "cuInit failed: CUDA_ERROR_NO_DEVICE",
            "cudaGetDeviceCount returned 999",
            "Cuda failure: invalid configuration argument",
            "CUDA kernel failed : no kernel image is available for execution on the device",
            "roi_align_forward_cuda: an illegal memory access was encountered",
            "GPUassert: unspecified launch failure kernels.cu 118",
            "[AITER] /srv/aiter_meta/csrc/kernels/custom_all_reduce.cu:397 fail to call hipIpcGetMemHandle(handle, ptr) ---> [HIP error](invalid argument)",
            "HIP error hipErrorNoBinaryForGpu at /srv/kernels/ops.hip:41",
        ),
        triggers=(
            b"no kernel image is available",
            b"an illegal memory access",
            b"an illegal instruction",
            b"device-side assert triggered",
            b"unspecified launch failure",
            b"[HIP error]",
            b"hipError",
            b"CUDA error",
            b"cuda runtime error",
            b"CUDA_ERROR_",
            b"CUDA driver error",
            b"Cuda failure",
            b"Test CUDA failure",
            b"HSA_STATUS_ERROR_",
            b"cudaError",
            b" returned ",
        ),
    ),
    Shape(
        "compiler",
        r"^(?:[^:\s]+:(?:\d+(?::\d+)?:)? )?fatal error: |^[^:\s]+\.(?:c|cc|cpp|cxx|cu|cuh|h|hpp|hh)(?:\(\d+\))?:\d*:?\d*:? ?error: |"
        r"^[^:\s]+\.cu(?:h)?\(\d+\): error: |^nvcc fatal\s*: |^ptxas fatal\s*: ",
        (
            "/tmp/pip-build/csrc/ops.cpp:4:10: fatal error: Python.h: No such file or directory",
            'csrc/attention.cu(128): error: identifier "__hmax2" is undefined',
            "csrc/ops.cpp:17:5: error: 'at::Tensor' has not been declared",
            "nvcc fatal   : Unsupported gpu architecture 'compute_120'",
            "ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'",
            "fatal error: cuda_runtime.h: No such file or directory",
            "x86_64-linux-gnu-gcc: fatal error: cannot execute 'cc1plus': execvp: No such file or directory",
        ),
        triggers=(b"fatal error", b"error:", b"nvcc fatal", b"ptxas fatal"),
    ),
    Shape(
        "linker",
        r"\bld(?:\.\w+)?: (?:final link failed|cannot find -l|.*undefined reference to)|^[^:\s]+\.o: .*undefined reference to",
        (
            "/usr/bin/ld: final link failed: No space left on device",
            "/usr/bin/ld: cannot find -lcuda: No such file or directory",
            "ld: cannot find -lcudart",
            "ops.o: In function `launch': undefined reference to `cublasLtMatmul'",
        ),
        triggers=(b"ld: ", b"undefined reference"),
    ),
    Shape(
        "build",
        r"^collect2: error: ld returned \d+ exit status|^error: command '[^']+' failed with exit (?:code|status) \d+|"
        r"^ninja: build stopped: subcommand failed|^\s*error: subprocess-exited-with-error|"
        r"^(?:ERROR: )?Failed building wheel for |^\s*error: metadata-generation-failed|"
        r"^(?:ERROR: )?Could not build wheels for ",
        (
            "collect2: error: ld returned 1 exit status",
            "error: command '/usr/bin/g++' failed with exit code 1",
            "error: command '/usr/local/cuda/bin/nvcc' failed with exit status 1",
            "ninja: build stopped: subcommand failed.",
            "  error: subprocess-exited-with-error",
            "ERROR: Failed building wheel for flash-attn",
            "ERROR: Could not build wheels for vllm, which is required to install pyproject.toml-based projects",
        ),
        wrapper=True,
        triggers=(b"error:", b"ERROR: ", b"build stopped"),
    ),
    Shape(
        "pip",
        r"^(?:ERROR: )?(?:Could not find a version that satisfies|No matching distribution found for|"
        r"Cannot install .* because these package versions have conflicting dependencies|"
        r"ResolutionImpossible|Package '[^']+' requires a different Python|"
        r"Could not install packages due to an OSError)|"
        r"^\s*(?:× )?No solution found when resolving (?:dependencies|script dependencies)\b",
        (
            "ERROR: Could not find a version that satisfies the requirement vllm==0.99.0 (from versions: 0.9.0, 0.9.1)",
            "ERROR: No matching distribution found for flash-attn==9.9.9",
            "ERROR: Cannot install torch==2.5.1 and vllm==0.10.0 because these package versions have conflicting dependencies.",
            "ERROR: Package 'vllm' requires a different Python: 3.8.10 not in '<3.14,>=3.9'",
            "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device",
            "  × No solution found when resolving dependencies:",
            "  × No solution found when resolving dependencies for split (python_full_version >= '3.13'):",
        ),
        triggers=(b"ERROR: ", b"No solution found when resolving"),
    ),
    Shape(
        "usage",
        r"^[\w./-]+(?: [\w.-]+){0,2}: error: (?:argument |unrecognized arguments|the following arguments are required|ambiguous option|invalid choice)",
        (
            "vllm serve: error: argument --limit-mm-per-prompt: Value image=4 cannot be converted to <function loads at 0x7f2c3b9d6b90>.",
            "vllm: error: argument --kv-cache-dtype: invalid choice: 'fp4' (choose from auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2)",
            "api_server.py: error: unrecognized arguments: --enable-prefix-cache",
            "train.py: error: the following arguments are required: --model",
            "launch_server.py: error: argument --tp-size: invalid int value: 'two'",
        ),
        triggers=(b": error: ",),
    ),
    # the dynamic loader could not start a program: a shared library it links is missing
    Shape(
        "loader",
        r": error while loading shared libraries: \S+: cannot open shared object file",
        (
            "/opt/aws_neuronx_venv/lib/python3.10/site-packages/neuronxcc/starfish/bin/walrus_driver: error while loading shared libraries: libxml2.so.2: cannot open shared object file: No such file or directory",
            "python3: error while loading shared libraries: libpython3.10.so.1.0: cannot open shared object file: No such file or directory",
        ),
        triggers=(b"error while loading shared libraries",),
    ),
    Shape(
        "program",
        r"^[\w.+-]+: (?:(?:fatal )?error|fatal): ",
        (
            "srun: error: gpu-node-3: task 2: Out Of Memory",
            "srun: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.",
            "slurmstepd: error: *** STEP 4471823.0 ON gpu-node-3 CANCELLED AT 2025-11-29T03:22:44 ***",
            "g++: error: unrecognized command-line option '-mavx512fp16'",
        ),
        triggers=(b": error: ", b": fatal error: ", b": fatal: "),
    ),
    # tritonserver's last line when a model did not load: it reports the failures logged above
    Shape(
        "server-start",
        r"^error: creating server: ",
        ("error: creating server: Internal - failed to load all models",),
        wrapper=True,
        triggers=(b"error: creating server",),
    ),
    Shape(
        "program",
        # Triton's Python backend logs its stub's exception at INFO (pb_stub.cc): no model loads
        r"^\"?Failed to initialize Python stub: ",
        (
            "\"Failed to initialize Python stub: ModuleNotFoundError: No module named 'cv2'\\n\\nAt:\\n  /models/m/1/model.py(5): <module>\\n\"",
            "Failed to initialize Python stub: AttributeError: 'AsyncLLM' object has no attribute 'engine'",
        ),
        triggers=(b"Failed to initialize Python stub",),
        quiet_hint="Failed to initialize Python stub",
    ),
    Shape(
        "server",
        r"^(?:ERROR:\s+)?\[Errno \d+\] error while attempting to bind|^ERROR:\s+\[Errno \d+\] |"
        r"^ERROR:\s+Exception in ASGI application|^ERROR:\s+Application startup failed",
        (
            "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use",
            "ERROR:    Exception in ASGI application",
            "ERROR:    Application startup failed. Exiting.",
            "[Errno 99] error while attempting to bind on address ('::1', 8000, 0, 0): cannot assign requested address",
        ),
        triggers=(b"ERROR:", b"[Errno "),
    ),
    Shape(
        "http",
        # an access log's 500: uvicorn / gunicorn ('"POST /x HTTP/1.1" 500'), Ray Serve's proxy
        r'HTTP/\d(?:\.\d)?" 500\b|\b(?:GET|POST|PUT|PATCH|DELETE) /\S* 500 \d+(?:\.\d+)?ms\b',
        (
            'INFO:     10.0.0.20:51644 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error',
            '[2026-01-09 10:12:41] INFO:     127.0.0.1:40218 - "POST /generate HTTP/1.1" 500',
            "INFO 2025-11-04 09:12:44,118 proxy 10.0.0.3 7c1e2f0a-9b1d-4e55 -- POST /v1/chat/completions 500 35201.6ms",
        ),
        wrapper=True,
        triggers=(b'" 500', b" 500 "),
        quiet_hint=" 500",  # an access log writes a server's 500 answer at INFO
    ),
    # a server or router's 503 (no worker, engine gone), at INFO too: access logs, SGLang router
    Shape(
        "http",
        r'HTTP/\d(?:\.\d)?" 503\b|\bstatus_code=503\b',
        (
            'INFO:     10.0.0.20:51644 - "POST /v1/chat/completions HTTP/1.1" 503 Service Unavailable',
            'http_request{method=POST uri=/generate request_id="gnt-1" status_code=503 latency=0.000412}: sglang_router_rs::middleware: src/middleware.rs:262: finished processing request',
        ),
        wrapper=True,
        triggers=(b'" 503', b"status_code=503"),
        quiet_hint="503",
    ),
    # a test runner's summary of tests that failed (pytest's -ra lines and closing line,
    # unittest's closing line): each reports a failure shown above it (pytest's "E   " lines)
    Shape(
        "tests",
        r"^(?:FAILED|ERROR) [^\s:]+(?:::\S+)?(?: - |$)|^=+ (?:[\w ,]*\b)?\d+ (?:failed|errors?)\b[\w ,]* in [\d.]+s\b.*=+$|"
        r"^FAILED \((?:failures|errors)=\d+",
        (
            "FAILED tests/test_compile.py::test_compiled_mlp - torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
            "FAILED tests/test_model.py::TestLoad::test_from_pretrained[bf16]",
            "ERROR tests/test_data.py - ModuleNotFoundError: No module named 'datasets'",
            "========================= 1 failed, 1 passed in 41.07s ========================",
            "==== 2 failed, 10 passed, 1 warning, 1 error in 12.30s ====",
            "FAILED (failures=1, errors=2)",
        ),
        wrapper=True,
        triggers=(
            b"FAILED ",
            b"ERROR ",
            b" failed,",
            b" failed in ",
            b" error in ",
            b" errors in ",
        ),
    ),
    # `ray job submit` / `status` on a failed job: its output above holds the failure
    Shape(
        "ray-job",
        r"^Job '[^'\s]+' failed\s*$",
        ("Job 'raysubmit_Xk2pQ9mN4vLr8sTw' failed", "Job 'train-run-0412' failed"),
        wrapper=True,
        triggers=(b"' failed",),
    ),
    Shape(
        "container-hook",
        r"\bOCI runtime (?:create|exec) failed\b|\berror running (?:prestart |createRuntime )?hook\b|\bfailed to create (?:shim )?task\b",
        (
            "Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running prestart hook #0: exit status 1, stdout: , stderr:",
            "Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'",
        ),
        wrapper=True,
        triggers=(
            b"OCI runtime",
            b"running prestart hook",
            b"running hook",
            b"create shim task",
            b"create task",
        ),
    ),
    Shape(
        "container",
        r"\bnvidia-container-cli: .*error|^docker: Error response from daemon: |"
        r"could not select device driver \"[^\"]*\" with capabilities|\bFailed to initialize NVML: ",
        (
            "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container: unknown.",
            'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
            "Failed to initialize NVML: Driver/library version mismatch",
        ),
        triggers=(
            b"nvidia-container-cli",
            b"Error response from daemon",
            b"could not select device driver",
            b"Failed to initialize NVML",
        ),
    ),
    Shape(
        "evicted",
        r"^\s*Reason:\s+Evicted\s*$|\bThe node was low on resource: \w|"
        r"\bephemeral local storage usage exceeds the total limit\b|"
        r"\bfailed (?:liveness|startup) probe, will be restarted\b",
        (
            "Reason:           Evicted",
            "  Warning  Evicted  18h   kubelet  The node was low on resource: memory. Threshold quantity: 100Mi, available: 92Mi.",
            "Message:          Pod ephemeral local storage usage exceeds the total limit of containers 5Gi.",
            "  Normal   Killing    13m (x3 over 15m)   kubelet  Container main failed liveness probe, will be restarted",
            "  Normal   Killing    2m    kubelet  Container vllm failed startup probe, will be restarted",
        ),
        triggers=(
            b"Evicted",
            b"low on resource",
            b"storage usage exceeds",
            b"probe, will be restarted",
        ),
    ),
    Shape(
        "k8s-event",
        # a Kubernetes Warning event (`kubectl describe` and `kubectl get events` tables) whose
        # reason says the pod cannot start or its job failed (a container that keeps failing,
        # BackOff, is the "died" shape's); FailedScheduling is left out (a cluster autoscaler's
        # scale-up answers it) and Unhealthy too (a probe during start-up)
        r"(?:^|\s)Warning {2,}(?:FailedCreatePodSandBox|UnexpectedAdmissionError|FailedMount|"
        r"FailedAttachVolume|FailedPostStartHook|FailedCreate|Failed|DeadlineExceeded|"
        r"BackoffLimitExceeded) {2,}",
        (
            '  Warning  FailedCreatePodSandBox  12s (x4 over 48s)  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured',
            "  Warning  UnexpectedAdmissionError  21s  kubelet  Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 4, Available: 0, which is unexpected",
            '  Warning  FailedMount  2m (x9 over 20m)  kubelet  MountVolume.SetUp failed for volume "model-cache" : secret "hf-token" not found',
            "  Warning  Failed     14s (x3 over 52s)  kubelet  Error: ErrImagePull",
            "5m          Warning   BackoffLimitExceeded   job/finetune-llama   Job has reached the specified backoff limit",
            '2m12s       Warning   FailedCreate           replicaset/vllm-7d9f   Error creating: pods "vllm-7d9f-" is forbidden: exceeded quota: gpu-quota',
        ),
        triggers=(b"Warning  ",),
    ),
    *CRASH_SHAPES,
    Shape(
        "nccl",
        r"\bNCCL WARN\b|\bNCCL error\b|\bncclInternalError\b|\bncclSystemError\b|\bncclUnhandledCudaError\b|"
        r"\bncclInvalidUsage\b|\bncclRemoteError\b|\bncclInvalidArgument\b|\bNCCL failure\b|"
        # NVSHMEM's errors: its source file and line, then what failed
        r"(?:\b|_)nvshmem\S*/\S+\.(?:cpp|cu|cc|c|h):(?:\w+:)?\d+: ",
        (
            "node-1:2345:2390 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<43355> failed : Software caused connection abort",
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
            "ncclInternalError: Internal check failed.",
            "node-b: Test NCCL failure common.cu:959 'internal error - please report this issue to the NCCL developers'",
            "/opt/nvshmem/nvshmem/src/modules/transport/ibgda/ibgda.cpp:1889: NULL value cannot allocate mlx5dv_devx_uar",
            "/tmp/nvshmem_src/src/host/init/init.cu:nvshmemi_check_state_and_init:1080: nvshmem initialization failed, exiting",
            # NVIDIA's own builds: the source tree is ".../main_nvshmem/src/..."
            "/dvs/p4/build/sw/rel/gpgpu/toolkit/r13.2/main_nvshmem/src/host/team/team_internal.cpp:1821: error status: 2 (NVSHMEMX_ERROR_OUT_OF_MEMORY) No more teams available (max = 7), try setting NVSHMEM_MAX_TEAMS environment variable",
        ),
        triggers=(
            b"NCCL WARN",
            b"NCCL error",
            b"ncclInternalError",
            b"ncclSystemError",
            b"ncclUnhandledCudaError",
            b"ncclInvalidUsage",
            b"ncclRemoteError",
            b"ncclInvalidArgument",
            b"NCCL failure",
            b"nvshmem",
        ),
    ),
    Shape(
        "died",
        r"\bdied unexpectedly\b|^\s*exitcode\s*:\s*[1-9]\d*\b|\bhit an exception\b.*\bterminat|"
        r"\bWorkerProc initialization failed\b|\bEngine core initialization failed\b|"
        r"\bexits with return code = -?[1-9]\d*\b|\bBack-off restarting failed container\b|"
        # an IDE's run (PyCharm), docker compose, GNU time: a process that ended with an error
        # (1-127, a Windows status; 128 and up is a signal: a stop, or the OOM killer's 137)
        r"^Process finished with exit code (?:-\d+|[1-9]\d?|1[01]\d|12[0-7])\b|"
        r"\bexited with code (?:[1-9]\d?|1[01]\d|12[0-7])\b|"
        r"^Command exited with non-zero status \d+",
        (
            "Process finished with exit code 1",
            "Process finished with exit code -1073741819 (0xC0000005)",
            "vllm-server-1 exited with code 1",
            "Command exited with non-zero status 1",
            "  Warning  BackOff  3m5s (x201 over 51m)  kubelet  Back-off restarting failed container driver-validation in pod v-h6t4c_gpu-operator(5c7e2a31)",
            "ERROR 01-20 13:03:50 [multiproc_executor.py:146] Worker proc VllmWorker-0 died unexpectedly, shutting down executor.",
            "[2023-07-20 08:31:52,773] [ERROR] [launch.py:321:sigkill_handler] ['/opt/conda/bin/python', '-u', 'main.py', '--local_rank=3'] exits with return code = 7",
            "  exitcode  : 1 (pid: 4155)",
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
        ),
        wrapper=True,
        triggers=(
            b"died unexpectedly",
            b"exitcode",
            b"hit an exception",
            b"initialization failed",
            b"exits with return code",
            b"Back-off restarting",  # kubelet: a container that keeps failing
            b"finished with exit code",
            b"exited with code",
            b"exited with non-zero status",
        ),
    ),
    Shape(
        "timeout",
        r"\bWatchdog caught collective operation timeout\b|\bDeadlineExceeded\b|\bTimed out (?:after|waiting)\b",
        (
            "[rank3]:[E1201 10:12:13.456789 4155 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=11, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600042 milliseconds before timing out.",
            "TimeoutError: Timed out after 300 seconds waiting for clients. 1/2 clients joined.",
        ),
        triggers=(b"Watchdog caught", b"DeadlineExceeded", b"Timed out"),
    ),
    Shape(
        "validation",
        r"^\d+ validation errors? for \w+|^pydantic_core\._pydantic_core\.ValidationError: ",
        (
            "1 validation error for ModelConfig",
            "2 validation errors for SpeculativeConfig",
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig",
        ),
        triggers=(b"validation error",),
    ),
    Shape(
        "oom",
        r"(?i:\bout of memory\b)|\bOutOfMemoryError\b|\bCUBLAS_STATUS_ALLOC_FAILED\b|\bhipErrorOutOfMemory\b",
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.10 GiB",
        ),
        triggers=(
            b"out of memory",
            b"Out of memory",
            b"Out Of Memory",
            b"OutOfMemoryError",
            b"CUBLAS_STATUS_ALLOC_FAILED",
            b"hipErrorOutOfMemory",
        ),
    ),
    *LAUNCH_SHAPES,
)

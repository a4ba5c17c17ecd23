"""Failure lines of a native crash: a signal (segmentation fault, bus error, abort, illegal
instruction), C++'s terminate, glibc's heap checks, a Rust panic, an Apple framework's failed
assertion, LLVM's fatal error (Triton's compiler), and the shell or launcher reporting one;
the OpenMP runtime's fatal errors; and a thread the process could not start.
Standard library only, like :mod:`tracelens.read.shapes`."""

from __future__ import annotations

from tracelens.read.shape import Shape

CRASH_SHAPES: tuple[Shape, ...] = (
    Shape(
        "crash",
        r"\bSegmentation fault\b|\b(?i:bus error)\b|\bcore dumped\b|\bSignal (?:11|7|6|4) \(SIG(?:SEGV|BUS|ABRT|ILL)\)|"
        r"\bexitcode\s*:\s*-(?:11|7|6|4)\b|\bnon-zero exit status (?:-11|139|134)\b|^Fatal Python error: |"
        r"\bterminate called after throwing an instance of|^\*\*\* (?:SIGSEGV|SIGABRT|SIGBUS) |^\s*what\(\):\s|^Aborted\b|"
        r"\bIllegal instruction\b|\bdouble free or corruption\b|\bfree\(\): invalid (?:pointer|size)\b|"
        # tcmalloc's heap check (a preloaded allocator freeing memory another one allocated)
        r"\bAttempt to (?:free|realloc) invalid pointer\b|"
        r"\bmalloc\(\): \w|\bcorrupted size vs\. prev_size\b|\bmunmap_chunk\(\): invalid pointer\b|"
        r"\*\*\* stack smashing detected \*\*\*|\bSegfault encountered\b|"
        # a Rust panic (tokenizers, sglang-router): its message on the next line (1.73+) or quoted
        r"^thread '[^']*' panicked at |"
        # LLVM's report_fatal_error (Triton's and other compilers' backend), then abort()
        r"^LLVM ERROR: |"
        # an Apple framework's assertion (Metal / MPS), and the shell reporting the abort
        r": failed assertion `|^(?:zsh|bash|sh): (?:abort|segmentation fault|bus error|illegal hardware instruction)\b|"
        r"^\[\d+\]\s+\d+ (?:abort|segmentation fault|bus error)\s",
        (
            "/AppleInternal/Library/BuildRoots/ce725a5f/Library/Caches/com.apple.xbs/Sources/MetalPerformanceShaders/MPSCore/Types/MPSNDArray.mm:829: failed assertion `[MPSNDArray initWithDevice:descriptor:isTextureBacked:] Error: total bytes of NDArray > 2**32'",
            "zsh: abort      python generate.py",
            "zsh: segmentation fault  python train.py",
            "[1]    48211 abort      python run.py",
            "LLVM ERROR: Failed to compute parent layout for slice layout.",
            "Segmentation fault (core dumped)",
            "Bus error (core dumped)",
            "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
            "Fatal Python error: Segmentation fault",
            "Fatal Python error: Aborted",
            "!!!!!!! Segfault encountered !!!!!!!",
            "terminate called after throwing an instance of 'c10::Error'",
            "  exitcode  : -11 (pid: 4155)",
            "*** SIGSEGV received at time=1733040000 on cpu 3 ***",
            "Signal 11 (SIGSEGV) received by PID 4155",
            "  what():  std::bad_alloc",
            "Aborted (core dumped)",
            "start-server.sh: line 18:  1669 Illegal instruction     (core dumped) python -m vllm.entrypoints.openai.api_server",
            "double free or corruption (out)",
            "free(): invalid pointer",
            "src/tcmalloc.cc:283] Attempt to free invalid pointer 0x5a3426e0",
            "*** stack smashing detected ***: terminated",
            "thread 'main' panicked at src/main.rs:112:10:",
            "thread '<unnamed>' panicked at 'called `Result::unwrap()` on an `Err` value: Os { code: 2 }', src/lib.rs:40:9",
            "thread 'tokio-runtime-worker' panicked at /root/.cargo/registry/src/index.crates.io-6f17d22bba15001f/tokio-1.46.1/src/runtime/blocking/shutdown.rs:51:21:",
        ),
        triggers=(
            b"Segmentation fault",
            b"Bus error",
            b"bus error",
            b"Segfault encountered",
            b"core dumped",
            b"SIGSEGV",
            b"SIGBUS",
            b"SIGABRT",
            b"SIGILL",
            b"Fatal Python error",
            b"failed assertion `",
            b": abort",
            b" abort ",
            b": segmentation fault",
            b": bus error",
            b": illegal hardware instruction",
            b"terminate called",
            b"' panicked at ",
            b"LLVM ERROR: ",
            b"exitcode",
            b"exit status",
            b"what():",
            b"Aborted",
            b"Illegal instruction",
            b"double free",
            b"free(): ",
            b"Attempt to free invalid",
            b"Attempt to realloc invalid",
            b"malloc(): ",
            b"corrupted size",
            b"munmap_chunk",
            b"stack smashing",
        ),
    ),
    # the OpenMP runtime (LLVM's, Intel's) refusing to go on: two copies of it in one process
    # ("OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already
    # initialized."), a thread it could not start (#34), an assertion of its own (#13)
    Shape(
        "openmp",
        r"^OMP: Error #\d+: ",
        (
            "OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.",
            "OMP: Error #34: System unable to allocate necessary resources for OMP thread:",
        ),
        triggers=(b"OMP: Error #",),
    ),
    # a thread the process could not start: the process or thread limit (a container's pids
    # limit, ulimit -u), or no memory for its stack (OpenBLAS, libgomp, Python's threading)
    Shape(
        "threads",
        r"\bpthread_create failed\b|\bThread creation failed\b|\bcan't start new thread\b|"
        r"\bpthread_create\(\) failed\b",
        (
            "OpenBLAS blas_thread_init: pthread_create failed for thread 61 of 96: Resource temporarily unavailable",
            "libgomp: Thread creation failed: Resource temporarily unavailable",
            "RuntimeError: can't start new thread",
        ),
        triggers=(b"pthread_create", b"Thread creation failed", b"can't start new thread"),
    ),
)

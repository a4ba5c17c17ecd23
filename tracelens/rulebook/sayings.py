"""Messages that name their failure whatever raised them: the first table the guess of an
unrecognized failure's category reads (:mod:`tracelens.rulebook.guess`)."""

from __future__ import annotations

import re
from functools import cache

from tracelens.pyregex import compile_re


@cache
def say_it() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Messages that name their failure whatever raised them (checked first), compiled on
    first use."""
    return (
        (
            compile_re(
                r"Address already in use|EADDRINUSE|\[Errno 98\]|used by a process already", re.I
            ),
            "port-in-use",
        ),
        # two options the user gave that cannot go together, whatever they are about
        (
            compile_re(
                r"\bare mutually exclusive\b|\bcannot be (?:used|set|specified|enabled) together\b|"
                r"\bcannot both be (?:set|specified|enabled)\b"
            ),
            "config-invalid",
        ),
        (
            compile_re(
                r"No space left on device|Disk quota exceeded|Stale file handle|disk is full|"
                r"OutOfDisk|\[Errno (?:28|116|122)\]|ephemeral local storage|low on resource: (?:ephemeral-storage|nodefs)|"
                r"Not enough disk space|No usable temporary directory found",
                re.I,
            ),
            "disk-or-file-corrupt",
        ),
        (
            compile_re(
                r"CUDA (?:error: )?out of memory|OutOfMemoryError|"
                # XLA on TPU: the device's HBM, not the host's memory
                r"Error allocating device buffer|\bRESOURCE_EXHAUSTED\b|"
                # the CUDA libraries' own status for memory they could not get
                r"\bCU(?:BLAS|SPARSE|SOLVER|DNN)_STATUS_ALLOC_FAILED\b|\bCUFFT_ALLOC_FAILED\b|"
                r"\bCURAND_STATUS_ALLOCATION_FAILED\b|\bCUSPARSE_STATUS_INSUFFICIENT_RESOURCES\b",
                re.I,
            ),
            "gpu-oom",
        ),
        # an extension (torch_scatter, torch_cluster, detectron2 ...) built without its CUDA
        # kernels: that package's build to replace, not the GPU stack (torch's own CPU-only
        # wheel says "Torch not compiled with CUDA enabled", below)
        (compile_re(r"\bNot compiled with (?:CUDA|GPU) support\b"), "dependency-missing"),
        # a header a build needs is not installed (Python.h, pybind11): its development package
        (
            # (not a CUDA toolkit header: a toolkit that does not fit the build is the build's)
            compile_re(
                r"fatal error: (?!cuda|cu\w+\.h)[\w/.+-]+\.h(?:pp)?: No such file or directory"
            ),
            "dependency-missing",
        ),
        (
            compile_re(
                r"torch\.cuda\.is_available\(\) is False|No (?:CUDA|HIP|XPU|NPU) GPUs are available|"
                r"TPU initialization failed|"
                r"no CUDA-capable device|Found no NVIDIA driver|NVIDIA driver on your system is too old|"
                r"CUDA driver version is insufficient|\brequires a GPU\b|Device acquire failed|"
                r"runtime cannot be initialized|\bno \w+ devices? (?:is |are )?(?:available|found)\b|"
                # the driver or the container runtime, not the code: CUDA's forward
                # compatibility on a GPU without it (Error 804), a CDI device the runtime cannot
                # resolve
                r"Unexpected error from cudaGetDeviceCount|forward compatibility was attempted|"
                r"unresolvable CDI devices?|"
                # a torch built without CUDA (a CPU-only wheel) asked for a GPU
                r"Torch not compiled with CUDA enabled|compiled without CUDA support|"
                # no GPU where one was asked for, the driver's library missing, a kernel image
                # the driver cannot load (a PTX newer than the driver), no GPU driver for Triton
                r"\bNo (?:NVIDIA )?GPUs? (?:found|available|detected)\b|no GPU resources available|"
                r"No supported gpu backend|Device string must not be empty|libcuda\.so cannot found|"
                r"cannot find -lcuda\b|device kernel image is invalid|\b0 active drivers\b|"
                # the system's GPUs not ready (NVSwitch fabric manager) or not available to CUDA
                # (exclusive mode, an unlicensed vGPU)
                r"SYSTEM_NOT_READY|system not yet initialized|\bbusy or unavailable\b|UNSUPPORTED_PTX_VERSION|"
                r"cudaErrorDevicesUnavailable",
                re.I,
            ),
            "cuda-driver-mismatch",
        ),
        # a kernel that faulted, whatever library or backend launched it
        (
            compile_re(
                r"CUDNN_STATUS_EXECUTION_FAILED|CUBLAS_STATUS_EXECUTION_FAILED|"
                r"an illegal memory access was encountered|cudaErrorIllegalAddress|\berr 700\b|"
                # a device the driver lost (a hang, a reset): Level Zero's, HIP's words
                r"DEVICE_LOST\b|\bdevice (?:was )?lost\b"
            ),
            "gpu-kernel-fault",
        ),
        # a deadline the job was given ran out (Kubernetes' activeDeadlineSeconds, Slurm's
        # --time): the limit set for it, not a collective that timed out
        (
            compile_re(
                r"\bDeadlineExceeded\b|\bactive (?:on the node )?longer than (?:the )?specified "
                r"deadline\b|\bDUE TO TIME LIMIT\b"
            ),
            "config-invalid",
        ),
        # a process killed for the host's memory (a scheduler saying so)
        (
            compile_re(r"\bkilled\b[^\n]{0,80}\bout of (?:host |system )?memory\b", re.I),
            "host-oom",
        ),
        # a device index or a scheduler request that does not fit what the machine has
        (
            compile_re(
                r"invalid device ordinal|Requested node configuration is not available|"
                r"Batch job submission failed",
                re.I,
            ),
            "config-invalid",
        ),
        # a JIT or extension build that failed (whatever kernel library it builds)
        (
            compile_re(r"Ninja build failed|ninja: build stopped|Error building extension '"),
            "compile-failure",
        ),
        # a checkpoint whose keys do not fit the model (not a damaged file)
        (
            compile_re(r"(?:Missing|Unexpected) keys? ?(?:\(s\) )?in (?:checkpoint )?state_dict"),
            "tensor-mismatch",
        ),
        (
            compile_re(
                r"undefined symbol|does not match the version torch was compiled with|"
                # Windows's word for a missing symbol; torch's own libraries missing for an
                # extension built against another torch
                r"The specified procedure could not be found|"
                r"\blib(?:c10|torch\w*)\.so: cannot open shared object file",
                re.I,
            ),
            "native-abi-mismatch",
        ),
        # a tokenizer class without what the caller expects of it (a remote-code or third-party
        # tokenizer and another version of the library that drives it)
        (
            compile_re(
                r"'\w*Tokenizer\w*' object has no attribute|"
                r"\b\w*Tokenizer\w*\.\w+\(\) got (?:an unexpected keyword argument|multiple values)"
            ),
            "tokenizer-error",
        ),
        (compile_re(r"couldn't connect to 'https?://huggingface\.co"), "model-access"),
        # the GPU's memory reported a hardware error
        (
            compile_re(
                r"\buncorrectable ECC error\b|\bECC error(?:s)? (?:encountered|detected)\b", re.I
            ),
            "gpu-kernel-fault",
        ),
        # a pickle naming a class its module no longer has: another version of that package
        (compile_re(r"Can't get attribute '\w+' on <module"), "dependency-missing"),
        # the C heap's own checks: memory freed by an allocator that did not allocate it (a
        # preloaded tcmalloc or jemalloc, two runtimes' copies of one library), or corrupted
        (
            compile_re(
                r"\bAttempt to (?:free|realloc) invalid pointer\b|\bdouble free or corruption\b|"
                r"\bfree\(\): invalid (?:pointer|size)\b|\bmunmap_chunk\(\): invalid pointer\b|"
                r"\bcorrupted size vs\. prev_size\b"
            ),
            "native-abi-mismatch",
        ),
        # a spawned worker (Windows, macOS, start method "spawn") gets its work by pickling
        (
            compile_re(
                r"Can't pickle local object|Can't get attribute '\w+' on <module '__main__'"
            ),
            "fork-cuda-reinit",
        ),
        # a GPU too old or too new for a kernel, a dtype or a quantization method: said
        # before the quantization and attention words the same message holds
        (
            compile_re(
                r"no kernel image is available|compute capability (?:of )?\d+(?:\.\d+)? or (?:higher|above)|"
                r"\bMinimum capability\b|only supported on (?:SM|sm_?)\d+|requires? (?:SM|sm_?)\d+|"
                r"requires gfx\d+|Unsupported (?:GPU )?architecture\b|Value 'sm_\d+\w?' is not defined|"
                r"is not compatible with the current PyTorch installation|\bcompute capability less than\b|"
                r"not supported on (?:sm_?)?\d+(?:\.\d+)?\+? architectures?|"
                r"No supported CUDA architectures found|"
                # a dtype or kernel a GPU is too old (or too new) for, as libraries say it
                r"\bcompute capability (?:of )?(?:at least|>=) ?\d|Minimum capability: \d+\. Current capability|"
                r"too old to be supported by the triton GPU compiler|not supported in this architecture|"
                r"\bPlease use (?:Hopper|Blackwell|Ampere|Ada)\b|does not support (?:the )?current device|"
                r"not supported on \.target|requires \.target sm_|invalid device function|"
                r"\b(?:CU|HIP)BLAS_STATUS_NOT_SUPPORTED\b",
                re.I,
            ),
            "gpu-arch-unsupported",
        ),
        (
            compile_re(
                r"\barchitectures? \[?'?\w+'?\]? (?:is|are) not supported|Unrecognized configuration class|"
                r"does not recognize this architecture|model type `?\w+`? (?:is )?not (?:supported|recognized)|"
                r"\bUnsupported model type\b|\bUnknown (?:\w+ )?model[_ ]type\b|"
                r"\bhas no \w+ implementation\b|\bdoes not support `?device_map=",
                re.I,
            ),
            "model-arch-unsupported",
        ),
        # a bus error: in a container, shared memory (/dev/shm) that ran out under a mapping
        (
            compile_re(
                r"\bSIGBUS\b|\bBus error\b|\bsignal 7\b|\bsignal: 7\b|torch_shm_manager", re.I
            ),
            "shm-insufficient",
        ),
        # a checkpoint's quantization parameters (scales, packed weights) the model has no
        # place for: the quantization method or its loader does not fit this model
        (
            compile_re(
                r"\.\w*(?:weight_scale\w*|input_scale|qweight|qzeros|g_idx|weight_packed|"
                r"weight_zero_point|\.scales)'"
            ),
            "quantization-unsupported",
        ),
        # the numbers of training went non-finite: the model, its data or its precision
        (
            compile_re(
                r"\b(?:became|is|are) (?:infinite|inf) or NaN\b|\bfound NaN\b|\bNaN or Inf\b|"
                r"returned nan values\b|\bnon-finite (?:loss|values?)\b",
                re.I,
            ),
            "tensor-mismatch",
        ),
        # an operator Apple's MPS backend does not have
        (
            compile_re(r"\bMPS does not support\b|\bnot supported (?:at|on|for) the MPS device\b"),
            "tensor-mismatch",
        ),
    )

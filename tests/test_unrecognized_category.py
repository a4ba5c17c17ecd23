"""What an unrecognized failure most likely is: the category guessed from its kind, type, words
and the file that raised it, when no known failure is near enough to lend its own."""

from __future__ import annotations

import pytest

from tracelens.models import Frame
from tracelens.rulebook.guess import guess_category
from tracelens.rulebook.origin import Origin

SITE = "/opt/venv/lib/python3.11/site-packages"


def _origin(
    kind: str, etype: str, message: str, file: str = "", frame: Frame | None = None, **extra
) -> Origin:
    """An origin raised at ``file`` (or in ``frame``); ``extra``: more of its fields."""
    if frame is None and file:
        frame = Frame(file=file, lineno=10, function="f")
    text = f"{etype}: {message}" if etype else message
    return Origin(
        line=1,
        text=text,
        stream="main",
        kind=kind,
        type=etype,
        message=message,
        frame=frame,
        **extra,
    )


CASES = [
    # a package that asks for another version of another package, or an API a version removed
    (
        "version-not-compatible",
        "exception",
        "ValueError",
        "The version of PEFT you are using is not compatible, please use a version >= 0.18.2",
        f"{SITE}/transformers/utils/peft_utils.py",
        "dependency-missing",
    ),
    (
        "minimum-required-version",
        "exception",
        "Exception",
        "sgl-kernel is installed with version 0.3.14, which is less than the minimum required version 0.3.16",
        f"{SITE}/sglang/srt/utils.py",
        "dependency-missing",
    ),
    (
        "removed-in-version",
        "exception",
        "NotImplementedError",
        "Support for `validation_epoch_end` has been removed in v2.0.0. `M` implements this method.",
        f"{SITE}/pytorch_lightning/trainer/configuration_validator.py",
        "dependency-missing",
    ),
    # a size a kernel needs is no package's version
    (
        "requires-a-size",
        "exception",
        "AssertionError",
        "mm_mxfp8 requires N >= 128, got N=32. out_features is too small for mm_mxfp8.",
        f"{SITE}/vllm/model_executor/layers/quantization/utils/mxfp8_utils.py",
        "quantization-unsupported",
    ),
    # one installed package calling another with the arguments of another version of it
    (
        "signature-between-packages",
        "exception",
        "TypeError",
        "get_cpu_offload_context() takes from 0 to 4 positional arguments but 5 were given",
        f"{SITE}/megatron/core/transformer/transformer_block.py",
        "dependency-missing",
    ),
    (
        "signature-in-own-code",
        "exception",
        "TypeError",
        "build_model() takes 2 positional arguments but 3 were given",
        "/home/user/project/train.py",
        "unrecognized",
    ),
    # a checkpoint's quantization parameters the model has no place for
    (
        "quant-param-key",
        "exception",
        "KeyError",
        "'model.layers.18.mlp.down_proj.weight_scale'",
        f"{SITE}/sglang/srt/models/llama.py",
        "quantization-unsupported",
    ),
    # a device the driver lost, a deadline the job was given, a kill for host memory
    (
        "device-lost",
        "exception",
        "RuntimeError",
        "Native API failed. Native API returns: 20 (UR_RESULT_ERROR_DEVICE_LOST)",
        f"{SITE}/torch/xpu/memory.py",
        "gpu-kernel-fault",
    ),
    ("deadline", "level", "", "FailureTarget True DeadlineExceeded", "", "config-invalid"),
    (
        "killed-out-of-memory",
        "level",
        "",
        "Job 42 was killed before it finished (likely due to running out of memory)",
        "",
        "host-oom",
    ),
    # a shell's report of a signal: the command it quotes says nothing of the failure
    (
        "shell-job-command",
        "crash",
        "",
        "/bin/bash: line 1:  4821 Aborted                 (core dumped) python launch.py --xformers",
        "",
        "unrecognized",
    ),
    # a CUDA library's status for memory it could not get, whatever raised it
    (
        "cusparse-insufficient-resources",
        "exception",
        "cupy_backends.cuda.libs.cusparse.CuSparseError",
        "CUSPARSE_STATUS_INSUFFICIENT_RESOURCES",
        f"{SITE}/cupyx/cusparse.py",
        "gpu-oom",
    ),
    (
        "cublas-alloc-failed",
        "exception",
        "RuntimeError",
        "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        f"{SITE}/torch/nn/modules/linear.py",
        "gpu-oom",
    ),
    # a failed RAY_CHECK, as Ray's C++ logger prints it in a worker and in the raylet
    (
        "ray-check-failed",
        "error",
        "",
        "task_receiver.cc:181: An unexpected system state has occurred. You have likely discovered "
        "a bug in Ray. Please report this issue at https://github.com/ray-project/ray/issues and "
        "we'll work with you to fix it. Check failed: objects_valid",
        "",
        "ray-cluster",
    ),
    (
        "raylet-check-failed",
        "error",
        "",
        "(raylet) node_manager.cc:3309: An unexpected system state has occurred. Check failed: "
        "status.has_value()",
        "",
        "ray-cluster",
    ),
    # the OpenMP runtime refusing to go on, the C heap's checks
    (
        "openmp",
        "openmp",
        "",
        "OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.",
        "",
        "native-abi-mismatch",
    ),
    (
        "tcmalloc",
        "crash",
        "",
        "src/tcmalloc.cc:283] Attempt to free invalid pointer 0x5a3426e0",
        "",
        "native-abi-mismatch",
    ),
    # a thread the process could not start
    (
        "threads",
        "threads",
        "",
        "libgomp: Thread creation failed: Resource temporarily unavailable",
        "",
        "host-oom",
    ),
    # a bus error: shared memory that ran out under a mapping
    (
        "sigbus",
        "level",
        "",
        "Shard process was signaled to shutdown with signal 7 rank=1",
        "",
        "shm-insufficient",
    ),
    # training numbers that went non-finite
    (
        "loss-nan",
        "exception",
        "FloatingPointError",
        "Loss became infinite or NaN at iteration=127!",
        f"{SITE}/detectron2/engine/train_loop.py",
        "tensor-mismatch",
    ),
    (
        "mps-op",
        "exception",
        "NotImplementedError",
        "Output channels > 65536 not supported at the MPS device.",
        f"{SITE}/torch/nn/modules/conv.py",
        "tensor-mismatch",
    ),
    # two options that cannot go together, whatever words about compiling they name
    (
        "mutually-exclusive",
        "exception",
        "ValueError",
        "cudagraph_capture_sizes and compilation_config.cudagraph_capture_sizes are mutually exclusive",
        f"{SITE}/vllm/engine/arg_utils.py",
        "config-invalid",
    ),
    # a program's last words telling what to install
    (
        "please-install",
        "level",
        "",
        "Please install vllm[audio] for audio support",
        "",
        "dependency-missing",
    ),
    # a CPU-only torch asked for CUDA: no usable GPU stack, whatever raised it
    (
        "cpu-only-torch",
        "exception",
        "AssertionError",
        "Torch not compiled with CUDA enabled",
        f"{SITE}/torch/cuda/__init__.py",
        "cuda-driver-mismatch",
    ),
    # an extension built without its CUDA kernels: that package to rebuild or reinstall
    (
        "extension-cpu-only",
        "exception",
        "RuntimeError",
        "Not compiled with CUDA support",
        f"{SITE}/torch_cluster/radius.py",
        "dependency-missing",
    ),
    # XLA on a TPU out of its device memory
    (
        "tpu-hbm",
        "exception",
        "RuntimeError",
        "Bad StatusOr access: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 2.00G. That was not possible. There are 1.20G free.",
        f"{SITE}/torch_xla/core/xla_model.py",
        "gpu-oom",
    ),
    (
        "unsupported-model-type",
        "exception",
        "ValueError",
        "Unsupported model type phi3",
        "/opt/conda/lib/python3.10/site-packages/text_generation_server/models/__init__.py",
        "model-arch-unsupported",
    ),
    # a shape that does not fit inside a serving engine's code: what the engine was given, not
    # the user's layers (the same words in the user's code are a tensor mismatch)
    (
        "engine-shape",
        "exception",
        "RuntimeError",
        "The expanded size of the tensor (63) must match the existing size (3) at non-singleton dimension 0.  Target sizes: [63, 256].  Tensor sizes: [3, 256]",
        f"{SITE}/vllm/lora/layers/logits_processor.py",
        "config-invalid",
    ),
    (
        "user-shape",
        "exception",
        "RuntimeError",
        "The expanded size of the tensor (63) must match the existing size (3) at non-singleton dimension 0.  Target sizes: [63, 256].  Tensor sizes: [3, 256]",
        "/home/user/project/model.py",
        "tensor-mismatch",
    ),
    # a JIT kernel library with no build for this GPU: the architecture, not the library
    (
        "jit-no-arch",
        "exception",
        "RuntimeError",
        "No supported CUDA architectures found for major versions [10].",
        f"{SITE}/flashinfer/jit/core.py",
        "gpu-arch-unsupported",
    ),
    # a Ray actor that died of an error in its creation task: the actor's own exception (quoted
    # with its frames in the message) says what failed, not Ray's type
    (
        "ray-actor-quotes-its-error",
        "exception",
        "ray.exceptions.ActorDiedError",
        "The actor died because of an error raised in its creation task, "
        "ray::PolicyWorker.__init__() (pid=4121, ip=10.0.0.5, actor_id=ab12, repr=PolicyWorker)\n"
        '  File "/opt/app/workers/policy.py", line 88, in __init__\n'
        "    self.model = provider.build()\n"
        "ValueError: When using expert parallelism and tensor parallelism, sequence "
        "parallelism must be used",
        f"{SITE}/ray/_private/worker.py",
        "config-invalid",
    ),
    # the same type with no quoted traceback: Ray's own failure
    (
        "ray-actor-node-died",
        "exception",
        "ray.exceptions.ActorDiedError",
        "The actor died unexpectedly before finishing this task. The actor's node died.",
        f"{SITE}/ray/_private/worker.py",
        "ray-cluster",
    ),
    # a class built from a config file (torchtune, Hydra) given a key it does not take
    (
        "config-key",
        "exception",
        "TypeError",
        "DistributedCheckpointer.__init__() got an unexpected keyword argument 'model_type'",
        f"{SITE}/torchtune/config/_instantiate.py",
        "config-invalid",
    ),
    (
        "library-kwarg",
        "exception",
        "TypeError",
        "LlamaForCausalLM.__init__() got an unexpected keyword argument 'use_flash_attention_2'",
        f"{SITE}/transformers/modeling_utils.py",
        "dependency-missing",
    ),
    # the message names the failure, whatever raised it
    (
        "port",
        "exception",
        "RuntimeError",
        "The server socket has failed to listen on any local network address. code: -98, name: EADDRINUSE, message: address already in use",
        f"{SITE}/torch/distributed/rendezvous.py",
        "port-in-use",
    ),
    (
        "stale-nfs",
        "exception",
        "OSError",
        "[Errno 116] Stale file handle",
        f"{SITE}/torch/serialization.py",
        "disk-or-file-corrupt",
    ),
    (
        "quota",
        "exception",
        "OSError",
        "[Errno 122] Disk quota exceeded",
        "/home/u/train.py",
        "disk-or-file-corrupt",
    ),
    # "No space left" of SGLang's KV-cache token pool, not of a disk
    (
        "kv-pool-space",
        "exception",
        "AssertionError",
        "No space left for only one request, self.token_to_kv_pool_allocator.available_size()=0",
        f"{SITE}/sglang/srt/managers/schedule_batch.py",
        "kv-cache-insufficient",
    ),
    ("cuda-kind-oom", "cuda", "", "CUDA error: out of memory", "", "gpu-oom"),
    (
        "no-gpu",
        "exception",
        "RuntimeError",
        "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.",
        f"{SITE}/torch/serialization.py",
        "cuda-driver-mismatch",
    ),
    (
        "abi",
        "exception",
        "ImportError",
        "/x/flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
        f"{SITE}/flash_attn/flash_attn_interface.py",
        "native-abi-mismatch",
    ),
    (
        "gguf-arch",
        "exception",
        "ValueError",
        "GGUF model with architecture qwen3moe is not supported yet.",
        f"{SITE}/transformers/modeling_gguf_pytorch_utils.py",
        "model-arch-unsupported",
    ),
    # a missing library or version, unless the failure's kind says more
    (
        "shared-object",
        "exception",
        "OSError",
        "libxgrammar.so: cannot open shared object file: No such file or directory",
        "/usr/lib/python3.12/ctypes/__init__.py",
        "dependency-missing",
    ),
    (
        "old-api",
        "exception",
        "TypeError",
        "EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'",
        f"{SITE}/vllm/entrypoints/llm.py",
        "dependency-missing",
    ),
    (
        "container-runtime",
        "container",
        "",
        "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown",
        "",
        "cuda-driver-mismatch",
    ),
    # the type
    (
        "hub-id",
        "exception",
        "huggingface_hub.errors.HFValidationError",
        "Repo id must use alphanumeric chars",
        f"{SITE}/huggingface_hub/utils/_validators.py",
        "model-access",
    ),
    (
        "ray-actor",
        "exception",
        "ray.exceptions.RayActorError",
        "The actor died because of an error raised in its creation task",
        f"{SITE}/ray/_private/worker.py",
        "ray-cluster",
    ),
    (
        "pydantic-quant",
        "exception",
        "pydantic_core._pydantic_core.ValidationError",
        "1 validation error for VllmConfig\n  Value error, torch.bfloat16 is not supported for quantization method awq.",
        f"{SITE}/pydantic/_internal/_dataclasses.py",
        "quantization-unsupported",
    ),
    (
        "pydantic-plain",
        "exception",
        "pydantic_core._pydantic_core.ValidationError",
        "1 validation error for ModelConfig\n  Value error, max_model_len must be positive",
        f"{SITE}/pydantic/_internal/_dataclasses.py",
        "config-invalid",
    ),
    # the file that raised it
    (
        "attention-dir",
        "exception",
        "ValueError",
        "Head size 40 is not supported by MLACommon.",
        f"{SITE}/vllm/v1/attention/backends/mla/common.py",
        "attention-backend-unsupported",
    ),
    (
        "quant-dir",
        "exception",
        "AssertionError",
        "float16 is required for MoE compressed models.",
        f"{SITE}/vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors_moe.py",
        "quantization-unsupported",
    ),
    (
        "auto-class",
        "exception",
        "KeyError",
        "'qwen2'",
        f"{SITE}/transformers/models/auto/configuration_auto.py",
        "model-arch-unsupported",
    ),
    # tensors
    (
        "long-target",
        "exception",
        "RuntimeError",
        "Expected object of scalar type Long but got scalar type Float for argument #2 'target'",
        f"{SITE}/torch/nn/functional.py",
        "tensor-mismatch",
    ),
    (
        "mps-float64",
        "exception",
        "TypeError",
        "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64.",
        "/home/u/train.py",
        "tensor-mismatch",
    ),
    # a kernel fault needs a kernel's words: a device named in a message is not one
    (
        "device-named",
        "exception",
        "ValueError",
        "The requested device for vllm (cuda:1) is not available.",
        f"{SITE}/trl/trainer/grpo_trainer.py",
        "config-invalid",
    ),
    (
        "kernel-fault",
        "exception",
        "RuntimeError",
        "CUBLAS_STATUS_EXECUTION_FAILED when calling cublasGemmEx",
        "/home/u/model.py",
        "gpu-kernel-fault",
    ),
    # a framework's own check with no other word: the configuration it was given
    (
        "framework-assert",
        "exception",
        "AssertionError",
        "Sleep mode can only be used for one instance per process.",
        f"{SITE}/vllm/v1/worker/gpu_worker.py",
        "config-invalid",
    ),
    (
        "windows-path",
        "exception",
        "IndexError",
        "list index out of range",
        "C:\\venv\\Lib\\site-packages\\lightning\\fabric\\connector.py",
        "config-invalid",
    ),
    # the user's own code with nothing to go by stays unrecognized
    (
        "user-code",
        "exception",
        "NameError",
        "name 'model' is not defined",
        "/home/u/train.py",
        "unrecognized",
    ),
    (
        "no-accelerator",
        "exception",
        "RuntimeError",
        "Neuron runtime cannot be initialized; cannot determine the number of available NeuronCores",
        f"{SITE}/torch_neuronx/proxy.py",
        "cuda-driver-mismatch",
    ),
    (
        "spawn-pickle",
        "exception",
        "AttributeError",
        "Can't pickle local object 'make_loader.<locals>.<lambda>'",
        "C:\\Python311\\Lib\\multiprocessing\\reduction.py",
        "fork-cuda-reinit",
    ),
    (
        "program-missing",
        "exception",
        "FileNotFoundError",
        "[Errno 2] No such file or directory: 'ninja'",
        "/usr/lib/python3.12/subprocess.py",
        "dependency-missing",
    ),
    (
        "mps-device",
        "exception",
        "RuntimeError",
        "Placeholder storage has not been allocated on MPS device!",
        f"{SITE}/torch/nn/functional.py",
        "tensor-mismatch",
    ),
    # a size that is not a tensor's: a framework's check of its configuration
    (
        "block-size",
        "exception",
        "AssertionError",
        "Local block size 16 is not divisible by remote block size 32 or vice versa.",
        f"{SITE}/vllm/distributed/kv_transfer/kv_connector/utils.py",
        "config-invalid",
    ),
    # kinds keep their meaning
    ("killed", "killed", "", "Killed", "", "host-oom"),
    # a GPU too old or too new, said before the quantization or attention words
    (
        "min-capability",
        "exception",
        "ValueError",
        "The quantization method mxfp4 is not supported for the current GPU. Minimum capability: 90. Current capability: 86.",
        f"{SITE}/vllm/model_executor/layers/quantization/__init__.py",
        "gpu-arch-unsupported",
    ),
    (
        "gfx-target",
        "exception",
        "AssertionError",
        "mla_gluon requires gfx950 (CDNA4), got gfx942",
        f"{SITE}/aiter/ops/attention.py",
        "gpu-arch-unsupported",
    ),
    (
        "fp8-capability",
        "exception",
        "AssertionError",
        "Device compute capability 8.9 or higher required for FP8 execution.",
        f"{SITE}/transformer_engine/pytorch/fp8.py",
        "gpu-arch-unsupported",
    ),
    (
        "no-hip-gpus",
        "exception",
        "RuntimeError",
        "No HIP GPUs are available",
        f"{SITE}/torch/cuda/__init__.py",
        "cuda-driver-mismatch",
    ),
    # Kubernetes evicted a pod, or restarted a container its probe gave up on
    (
        "evicted-memory",
        "evicted",
        "",
        "  Warning  Evicted  18h   kubelet  The node was low on resource: memory. Threshold quantity: 100Mi, available: 92Mi.",
        "",
        "host-oom",
    ),
    (
        "evicted-storage",
        "evicted",
        "",
        "Message:          Pod ephemeral local storage usage exceeds the total limit of containers 5Gi.",
        "",
        "disk-or-file-corrupt",
    ),
    (
        "probe",
        "evicted",
        "",
        "  Normal   Killing    13m (x3 over 15m)   kubelet  Container main failed liveness probe, will be restarted",
        "",
        "config-invalid",
    ),
    (
        "dtensor-mixed",
        "exception",
        "RuntimeError",
        "aten.scatter.src got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor before calling distributed operators!",
        f"{SITE}/torch/distributed/tensor/_dispatch.py",
        "tensor-mismatch",
    ),
    (
        "xpu-resources",
        "exception",
        "RuntimeError",
        "UR backend failed. UR backend returns:40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)",
        f"{SITE}/torch/nn/modules/module.py",
        "gpu-oom",
    ),
    # versions that do not fit each other
    (
        "versions-differ",
        "exception",
        "RuntimeError",
        "flashinfer-cubin version (0.6.1) does not match flashinfer version (0.6.2). Please install the same version of both packages.",
        f"{SITE}/flashinfer/__init__.py",
        "dependency-missing",
    ),
    (
        "module-attribute",
        "exception",
        "AttributeError",
        "module 'os' has no attribute 'exit'. Did you mean: '_exit'?",
        f"{SITE}/intel_extension_for_pytorch/__init__.py",
        "dependency-missing",
    ),
    (
        "windows-dll",
        "exception",
        "OSError",
        '[WinError 126] The specified module could not be found. Error loading "C:\\envs\\torch\\lib\\fbgemm.dll" or one of its dependencies.',
        "C:\\envs\\site-packages\\torch\\__init__.py",
        "dependency-missing",
    ),
    (
        "harmony",
        "exception",
        "openai_harmony.HarmonyError",
        "Unexpected token 12606 while expecting start token 200006",
        f"{SITE}/vllm/entrypoints/harmony_utils.py",
        "tokenizer-error",
    ),
    (
        "safetensors-header",
        "exception",
        "Exception",
        "Error while deserializing header: HeaderTooLarge",
        f"{SITE}/safetensors/torch.py",
        "disk-or-file-corrupt",
    ),
    (
        "sglang-pool",
        "exception",
        "RuntimeError",
        "Not enough memory. Please try to increase --mem-fraction-static.",
        f"{SITE}/sglang/srt/model_executor/model_runner.py",
        "kv-cache-insufficient",
    ),
    (
        "compiled-autograd",
        "exception",
        "RuntimeError",
        "retains_grad_hooks not implemented for compiled autograd",
        f"{SITE}/torch/autograd/graph.py",
        "compile-failure",
    ),
    (
        "cuda-forward-compat",
        "exception",
        "RuntimeError",
        "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
        "calling NumCudaDevices() that might have already set an error? Error 804: forward "
        "compatibility was attempted on non supported HW",
        f"{SITE}/torch/cuda/__init__.py",
        "cuda-driver-mismatch",
    ),
    (
        "invalid-device-ordinal",
        "exception",
        "AssertionError",
        "Failed to initialize custom process group: CUDA error: invalid device ordinal",
        f"{SITE}/sglang/srt/model_executor/model_runner.py",
        "config-invalid",
    ),
    (
        "slurm-request",
        "slurm",
        "",
        "sbatch: error: Batch job submission failed: Requested node configuration is not available",
        "",
        "config-invalid",
    ),
    (
        "jit-build",
        "exception",
        "RuntimeError",
        "Ninja build failed. Ninja output: ninja: Entering directory `/root/.cache/flashinfer/cached_ops'",
        f"{SITE}/flashinfer/jit/cpp_ext.py",
        "compile-failure",
    ),
    (
        "arch-newer-than-supported",
        "exception",
        "AssertionError",
        "MXFP8 (for all gemm layouts) is not supported on 12.0+ architectures yet.",
        f"{SITE}/transformer_engine/pytorch/fp8.py",
        "gpu-arch-unsupported",
    ),
    (
        "cpp-place-first",
        "exception",
        "RuntimeError",
        "/opt/transformer-engine/transformer_engine/common/fused_attn/fused_attn_f16_arbitrary_seqlen.cu:1056 "
        "in function fused_attn_arbitrary_seqlen_bwd_impl: cuDNN Error: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: "
        "cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_EXECUTION_FAILED. For more information, "
        "enable cuDNN error logging by setting CUDNN_LOGERR_DBG=1 and CUDNN_LOGDEST_DBG=stderr in the environment.",
        f"{SITE}/transformer_engine/pytorch/attention/dot_product_attention/backends.py",
        "gpu-kernel-fault",
    ),
    (
        "checkpoint-keys",
        "exception",
        "RuntimeError",
        "Missing key in checkpoint state_dict: model.layers.0.attention.wq.weight.",
        f"{SITE}/torch/distributed/checkpoint/default_planner.py",
        "tensor-mismatch",
    ),
    # a serving engine that gave up waiting for its workers, and a timeout elsewhere
    (
        "engine-loop-timeout",
        "exception",
        "asyncio.exceptions.TimeoutError",
        "",
        f"{SITE}/vllm/engine/async_llm_engine.py",
        "worker-died",
    ),
    (
        "timeout-outside-an-engine",
        "exception",
        "TimeoutError",
        "",
        "/home/user/app/client.py",
        "unrecognized",
    ),
    # a kernel compiler's cache that lost a file (two processes writing one cache entry)
    (
        "compiler-cache-file-gone",
        "exception",
        "FileNotFoundError",
        "[Errno 2] No such file or directory: '/home/user/.triton/cache/0a1b2c/_rms_norm.json.tmp.pid_7_42'",
        f"{SITE}/triton/runtime/cache.py",
        "compile-failure",
    ),
    # torch.export's own checks of what it was given
    (
        "export-user-error",
        "exception",
        "torch._dynamo.exc.UserError",
        "Expecting `args` to be a tuple of example positional inputs, got <class 'torch.Tensor'>",
        f"{SITE}/torch/export/_trace.py",
        "compile-failure",
    ),
    (
        "export-dynamic-shapes-spec",
        "exception",
        "ValueError",
        "Node keys mismatch; missing key(s): {'attention_mask'}; extra key(s): {'mask'}",
        f"{SITE}/torch/export/dynamic_shapes.py",
        "compile-failure",
    ),
    # ... but an exported program called with an input of another shape is that input's
    (
        "exported-program-input-shape",
        "exception",
        "RuntimeError",
        "Expected input at *args[0].shape[0] to be equal to 2, but got 4",
        f"{SITE}/torch/_export/utils.py",
        "tensor-mismatch",
    ),
    # the Hugging Face Hub refused or failed the download, or no token was found
    (
        "hub-server-error",
        "exception",
        "requests.exceptions.HTTPError",
        "503 Server Error: Service Temporarily Unavailable for url: https://huggingface.co/api/models/org/model",
        f"{SITE}/requests/models.py",
        "model-access",
    ),
    (
        "hub-token-not-found",
        "exception",
        "huggingface_hub.errors.LocalTokenNotFoundError",
        "Token is required (`token=True`), but no token found.",
        f"{SITE}/huggingface_hub/utils/_headers.py",
        "model-access",
    ),
    # another build or release of a package: a compiled extension's arguments, generated
    # protobuf code, a file format, a program asking to be upgraded
    (
        "extension-incompatible-arguments",
        "exception",
        "TypeError",
        "causal_conv1d_fwd(): incompatible function arguments. The following argument types are supported:",
        f"{SITE}/mamba_ssm/ops/selective_scan_interface.py",
        "dependency-missing",
    ),
    (
        "protobuf-descriptors",
        "exception",
        "TypeError",
        "Descriptors cannot be created directly. If this call came from a _pb2.py file, your "
        "generated code is out of date and must be regenerated with protoc >= 3.19.0.",
        f"{SITE}/google/protobuf/descriptor.py",
        "dependency-missing",
    ),
    (
        "newer-file-format",
        "exception",
        "RuntimeError",
        "version_ <= kMaxSupportedFileFormatVersion INTERNAL ASSERT FAILED at "
        "/pytorch/caffe2/serialize/inline_container.cc:132",
        f"{SITE}/torch/serialization.py",
        "dependency-missing",
    ),
    (
        "please-upgrade",
        "exception",
        "ValueError",
        "The config file at /home/user/.cache/huggingface/accelerate/default_config.yaml had "
        "unknown keys (['enable_cpu_affinity']), please try upgrading your `accelerate` version",
        f"{SITE}/accelerate/commands/config/config_args.py",
        "dependency-missing",
    ),
    # a chat template, tool-call or reasoning parser, or a multimodal processor on a request
    (
        "chat-template-syntax",
        "exception",
        "jinja2.exceptions.TemplateSyntaxError",
        "expected token 'end of print statement', got 'name'",
        "",
        "tokenizer-error",
    ),
    (
        "chat-handler-streaming-tool-call",
        "exception",
        "IndexError",
        "list index out of range",
        f"{SITE}/vllm/entrypoints/openai/chat_completion/serving.py",
        "tokenizer-error",
    ),
    (
        "image-processor",
        "exception",
        "ValueError",
        "absolute aspect ratio must be smaller than 200, got 231.8",
        f"{SITE}/transformers/models/qwen2_vl/image_processing_qwen2_vl.py",
        "tokenizer-error",
    ),
    # a bitsandbytes-quantized model where its quantization is not supported
    (
        "prequantized-bnb-tensor-parallel",
        "exception",
        "ValueError",
        "Prequant BitsAndBytes models with tensor parallelism is not supported. Please try with "
        "pipeline parallelism.",
        f"{SITE}/vllm/model_executor/model_loader/loader.py",
        "quantization-unsupported",
    ),
    (
        "merge-in-8-bit-mode",
        "exception",
        "ValueError",
        "Cannot merge LORA layers when the model is loaded in 8-bit mode",
        f"{SITE}/peft/tuners/lora.py",
        "quantization-unsupported",
    ),
    # a dtype, kernel or instruction a GPU is too old (or too new) for, as libraries say it
    (
        "bf16-compute-capability-at-least",
        "exception",
        "ValueError",
        "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla "
        "V100-PCIE-16GB GPU has compute capability 7.0.",
        f"{SITE}/vllm/config.py",
        "gpu-arch-unsupported",
    ),
    (
        "triton-compiler-too-old-gpu",
        "exception",
        "torch._dynamo.exc.BackendCompilerFailed",
        "backend='inductor' raised: RuntimeError: Found Tesla P100-SXM2-16GB which is too old to "
        "be supported by the triton GPU compiler, which is used as the backend.",
        f"{SITE}/torch/_dynamo/output_graph.py",
        "gpu-arch-unsupported",
    ),
    (
        "fp8-type-not-in-architecture",
        "exception",
        "ValueError",
        "type fp8e4nv not supported in this architecture. The supported fp8 dtypes are "
        "('fp8e4b15', 'fp8e5')",
        f"{SITE}/triton/language/semantic.py",
        "gpu-arch-unsupported",
    ),
    (
        "invalid-device-function",
        "exception",
        "RuntimeError",
        "HIP error: invalid device function",
        f"{SITE}/torch/_ops.py",
        "gpu-arch-unsupported",
    ),
    (
        "cublas-not-supported",
        "exception",
        "RuntimeError",
        "CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(...)`",
        f"{SITE}/torch/nn/functional.py",
        "gpu-arch-unsupported",
    ),
    # torch.distributed's checks of how the job set it up, not a communication failure
    (
        "process-group-group-size",
        "exception",
        "ValueError",
        "The arg 'group_size' (8) must not exceed the world size (2)",
        f"{SITE}/torch/distributed/distributed_c10d.py",
        "config-invalid",
    ),
    # no GPU where one was asked for, the driver's library missing, a kernel image the driver
    # cannot load
    (
        "no-nvidia-gpu-found",
        "exception",
        "NotImplementedError",
        "Unsloth: No NVIDIA GPU found? Unsloth currently only supports GPUs!",
        f"{SITE}/unsloth/__init__.py",
        "cuda-driver-mismatch",
    ),
    (
        "device-kernel-image-invalid",
        "exception",
        "RuntimeError",
        "Triton Error [CUDA]: device kernel image is invalid",
        f"{SITE}/triton/compiler/compiler.py",
        "cuda-driver-mismatch",
    ),
    (
        "linker-cannot-find-libcuda",
        "linker",
        "",
        "/usr/bin/ld: cannot find -lcuda: No such file or directory",
        "",
        "cuda-driver-mismatch",
    ),
    # a header a build needs is not installed; a CUDA toolkit header stays the build's
    (
        "missing-python-header",
        "compiler",
        "",
        "/usr/include/torch/csrc/python_headers.h:10:10: fatal error: Python.h: No such file or directory",
        "",
        "dependency-missing",
    ),
    (
        "missing-cuda-toolkit-header",
        "compiler",
        "",
        "csrc/includes/gemm_test.h:6:10: fatal error: cuda_profiler_api.h: No such file or directory",
        "",
        "compile-failure",
    ),
    (
        "compiler-backend-import-error",
        "exception",
        "torch._dynamo.exc.BackendCompilerFailed",
        "backend='inductor' raised: ImportError: cannot import name 'triton_key' from "
        "'triton.compiler.compiler'",
        f"{SITE}/torch/_dynamo/output_graph.py",
        "dependency-missing",
    ),
    # the cluster has fewer GPUs (or nodes) than the job asked for
    (
        "cluster-gpus-short",
        "exception",
        "ValueError",
        "Total available GPUs 0 is less than total desired GPUs 8",
        f"{SITE}/verl/trainer/ppo/ray_trainer.py",
        "ray-cluster",
    ),
    # a tokenizer class without what its caller expects of it
    (
        "tokenizer-object-attribute",
        "exception",
        "AttributeError",
        "'TiktokenTokenizer' object has no attribute 'all_special_ids'",
        f"{SITE}/sglang/srt/utils/patch_tokenizer.py",
        "tokenizer-error",
    ),
    (
        "tokenizer-method-keyword",
        "exception",
        "TypeError",
        "ChatGLM4Tokenizer._pad() got an unexpected keyword argument 'padding_side'",
        f"{SITE}/transformers/tokenization_utils_base.py",
        "tokenizer-error",
    ),
    # Windows's word for a missing symbol: an extension built for another torch
    (
        "windows-procedure-not-found",
        "exception",
        "ImportError",
        "DLL load failed while importing _fused: The specified procedure could not be found.",
        f"{SITE}/sageattention/quant.py",
        "native-abi-mismatch",
    ),
    (
        "hub-could-not-connect",
        "exception",
        "OSError",
        "We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in "
        "the cached files and it looks like org/model is not the path to a directory",
        f"{SITE}/transformers/utils/hub.py",
        "model-access",
    ),
    # GPUs the system has not made ready or available to CUDA
    (
        "system-not-ready",
        "exception",
        "RuntimeError",
        "Unable to initialize backend 'cuda': INTERNAL: CUDA error: Failed call to cuInit: "
        "CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized",
        f"{SITE}/jax/_src/xla_bridge.py",
        "cuda-driver-mismatch",
    ),
    (
        "devices-busy-or-unavailable",
        "exception",
        "RuntimeError",
        "CUDA error: all CUDA-capable devices are busy or unavailable",
        f"{SITE}/torch/cuda/__init__.py",
        "cuda-driver-mismatch",
    ),
    (
        "uncorrectable-ecc",
        "exception",
        "RuntimeError",
        "CUDA error: uncorrectable ECC error encountered",
        f"{SITE}/torch/distributed/fsdp/_flat_param.py",
        "gpu-kernel-fault",
    ),
    # a pickle naming a class its module no longer has
    (
        "pickle-class-moved",
        "exception",
        "AttributeError",
        "Can't get attribute 'MCoreMetadata' on <module 'megatron.core.dist_checkpointing' from "
        "'/opt/megatron/megatron/core/dist_checkpointing/__init__.py'>",
        f"{SITE}/torch/serialization.py",
        "dependency-missing",
    ),
    # no room on disk, no usable temporary folder, a PTX newer than the driver, the shared
    # memory manager that could not make its folder
    (
        "not-enough-disk-space",
        "exception",
        "OSError",
        "Not enough disk space. Needed: 12.30 GiB (download: 4.10 GiB, generated: 8.20 GiB)",
        f"{SITE}/datasets/builder.py",
        "disk-or-file-corrupt",
    ),
    (
        "no-usable-temporary-directory",
        "exception",
        "FileNotFoundError",
        "[Errno 2] No usable temporary directory found in ['/tmp', '/var/tmp', '/usr/tmp']",
        "/usr/lib/python3.12/tempfile.py",
        "disk-or-file-corrupt",
    ),
    (
        "unsupported-ptx-version",
        "cuda",
        "",
        "Call to cuLinkAddData results in CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        "",
        "cuda-driver-mismatch",
    ),
    (
        "torch-shm-manager",
        "exception",
        "RuntimeError",
        'torch_shm_manager at "/opt/conda/lib/python3.10/site-packages/torch/bin/torch_shm_manager": '
        "could not generate a random directory for manager socket",
        f"{SITE}/torch/multiprocessing/reductions.py",
        "shm-insufficient",
    ),
    # a model type or class the engine or library has no implementation for
    (
        "unknown-gguf-model-type",
        "exception",
        "RuntimeError",
        "Unknown gguf model_type: mixtral",
        f"{SITE}/vllm/model_executor/model_loader/loader.py",
        "model-arch-unsupported",
    ),
    (
        "no-engine-implementation",
        "exception",
        "ValueError",
        "XLMRobertaForSequenceClassification has no SGlang implementation and the Transformers "
        "implementation is not compatible with SGLang.",
        f"{SITE}/sglang/srt/model_loader/utils.py",
        "model-arch-unsupported",
    ),
    (
        "no-device-map-support",
        "exception",
        "ValueError",
        "BertForSequenceClassification does not support `device_map='auto'`. To implement "
        "support, the model class needs to implement the `_no_split_modules` attribute.",
        f"{SITE}/transformers/modeling_utils.py",
        "model-arch-unsupported",
    ),
    # files of the model or data that are not where they were looked for
    (
        "no-config-format",
        "exception",
        "ValueError",
        "No supported config format found in org/model-8b-sft",
        f"{SITE}/vllm/transformers_utils/config.py",
        "model-access",
    ),
    (
        "files-cannot-be-found",
        "exception",
        "AssertionError",
        "One or both of the .idx and .bin files cannot be found at the path prefix /data/corpus_text",
        "/workspace/megatron/megatron/core/datasets/indexed_dataset.py",
        "model-access",
    ),
    # ... but the hub library's strict config dataclasses check a config's values
    (
        "hub-strict-config-field",
        "exception",
        "huggingface_hub.errors.StrictDataclassFieldValidationError",
        "Validation error for field 'n_inner': TypeError: Field 'n_inner' with value 2048.0 doesn't match type",
        f"{SITE}/huggingface_hub/dataclasses.py",
        "config-invalid",
    ),
]


@pytest.mark.parametrize(
    "kind,etype,message,file,category", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_category_of_an_unrecognized_failure(kind, etype, message, file, category):
    assert guess_category(_origin(kind, etype, message, file)) == category


def test_a_setup_check_of_torch_distributed_that_names_the_network_is_not_config():
    frame = Frame(
        file=f"{SITE}/torch/distributed/rendezvous.py",
        lineno=10,
        function="_tcp_rendezvous_handler",
        module="torch.distributed.rendezvous",
    )
    origin = _origin(
        "exception", "ValueError", "host not found: Name or service not known", frame=frame
    )
    assert guess_category(origin) == "nccl-error"


def _nearest_one_by_one(origin, entries, limit=3):
    """The nearest rules as scored before: one ``fuzz.ratio`` call an entry, each rule's best
    entry kept rounded."""
    from rapidfuzz import fuzz

    from tracelens.rulebook.nearest import _MIN_MESSAGE, _SAME_PACKAGE, key_text, package_of

    query, pkg = key_text(origin), package_of(origin)
    if len(query.split(":", 1)[-1].strip()) < _MIN_MESSAGE:
        return []
    best: dict[str, tuple[float, str]] = {}
    for e in entries:
        score = min(
            fuzz.ratio(query, e.text) + (_SAME_PACKAGE if pkg and e.package == pkg else 0), 100.0
        )
        if e.rule_id not in best or score > best[e.rule_id][0]:
            best[e.rule_id] = (round(score, 1), e.category)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:limit]
    return [(rid, cat, score) for rid, (score, cat) in ranked]


def test_the_nearest_rules_are_those_scoring_each_entry_in_turn_gives():
    import random

    from tracelens.rulebook.nearest import Entry, nearest

    rng = random.Random(7)
    words = (
        "CUDA out of memory NCCL timeout rank worker died Tried to allocate GiB engine core".split()
    )
    packages = ["", "torch", "vllm", "sglang"]

    def text() -> str:
        return "RuntimeError: " + " ".join(rng.choice(words) for _ in range(rng.randint(2, 12)))

    entries = [
        Entry(f"r/{rng.randint(0, 40)}", rng.choice(["a", "b"]), text(), rng.choice(packages))
        for _ in range(400)
    ]
    category = {}
    entries = [
        Entry(e.rule_id, category.setdefault(e.rule_id, e.category), e.text, e.package)
        for e in entries
    ]
    entries += entries[:20]  # the same text twice: equal scores, ties broken by rule id
    for k in range(60):
        etype, _, message = text().partition(": ")
        file = f"{SITE}/{rng.choice(packages[1:])}/x.py" if k % 3 else ""
        origin = _origin("exception", etype, message, file)
        for limit in (1, 3, 10, 100):
            got = [(n.rule_id, n.category, n.score) for n in nearest(origin, entries, limit)]
            assert got == _nearest_one_by_one(origin, entries, limit)


def _entry(
    rule_id: str, category: str, etype: str, message: str, package: str = "", file: str = ""
):
    from tracelens.rulebook.nearest import Entry

    return Entry(rule_id, category, f"{etype}: {message}", package, etype, file)


WORDS_ENTRIES = [
    _entry(
        "a/one",
        "dependency-missing",
        "AttributeError",
        "'DynamicCache' object has no attribute 'seen_tokens'",
        "transformers",
    ),
    _entry(
        "a/one",
        "dependency-missing",
        "AttributeError",
        "'DynamicCache' object has no attribute 'key_cache'",
        "transformers",
    ),
    _entry(
        "a/two",
        "dependency-missing",
        "AttributeError",
        "'BertConfig' object has no attribute 'pad_token_id'",
        "transformers",
    ),
    _entry(
        "b/one",
        "config-invalid",
        "ValueError",
        "pipeline parallel size must divide the number of layers",
        "vllm",
    ),
    _entry(
        "b/two",
        "config-invalid",
        "ValueError",
        "data parallel size must be set with expert parallel",
        "vllm",
    ),
]


def test_the_words_of_known_failures_give_their_category():
    from tracelens.rulebook.words import Words

    table = Words.build(WORDS_ENTRIES)
    # each rule weighs one: a/one's two examples count as much as b/one's single one
    assert table.prior == {"dependency-missing": 2.0, "config-invalid": 2.0}
    got = table.category(
        "AttributeError: 'Qwen2Config' object has no attribute 'rope_theta'",
        "AttributeError",
        "transformers",
        "",
    )
    assert got is not None and got[0] == "dependency-missing" and 0.5 < got[1] <= 1.0
    got = table.category(
        "ValueError: tensor parallel size must divide the heads", "ValueError", "vllm", ""
    )
    assert got is not None and got[0] == "config-invalid"
    # not one word, type or package the table knows: no answer rather than the prior's
    assert table.category("KeyError: 6", "KeyError", "", "") is None


def test_the_words_answer_only_where_the_guess_has_nothing_specific():
    from tracelens.rulebook.nearest import Near
    from tracelens.rulebook.unrecognized import choose_category
    from tracelens.rulebook.words import Answer

    framework = f"{SITE}/vllm/engine/arg_utils.py"
    # the guess's own words first (a CUDA out of memory is gpu-oom whatever the table says)
    oom = _origin("exception", "RuntimeError", "CUDA out of memory. Tried to allocate 2.00 GiB")
    assert choose_category(oom, [], 85.0, Answer("config-invalid", 0.9, 5)) == ("gpu-oom", None)
    # an exception with no word the guess knows: the words of known failures
    plain = _origin(
        "exception",
        "AttributeError",
        "'Gemma3Config' object has no attribute 'vocab_size'",
        framework,
    )
    assert choose_category(plain, [], 85.0, Answer("dependency-missing", 0.8, 5)) == (
        "dependency-missing",
        None,
    )
    # ... before the default for a framework's own checks, which stays where the words say nothing
    assert choose_category(plain, [], 85.0, None) == ("config-invalid", None)
    # a failure line without an exception type: the guess first; the words only where the
    # guess has nothing and they share enough with known failures (five features)
    line = _origin("error", "", "request failed with status 500")
    assert (
        choose_category(line, [], 85.0, Answer("dependency-missing", 0.9, 4))[0] == "unrecognized"
    )
    said = _origin("error", "", "slurmstepd: error: execve(): torchrun: No such file or directory")
    assert choose_category(said, [], 85.0, Answer("dependency-missing", 0.6, 5))[0] == (
        "dependency-missing"
    )
    # ... and never for a line that reports a failure told elsewhere (a server's 5xx answer)
    answer = _origin("http", "", '"POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error')
    assert choose_category(answer, [], 85.0, Answer("config-invalid", 0.9, 7))[0] == "unrecognized"
    # the guess's own words for a bare line: c++'s terminate of a c10d error, a cgroup's OOM kill
    dist = _origin(
        "error", "", "terminate called after throwing an instance of 'c10::DistBackendError'"
    )
    assert choose_category(dist, [], 85.0, Answer("config-invalid", 0.5, 5))[0] == "nccl-error"
    step = _origin(
        "error",
        "",
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.0. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.",
    )
    assert choose_category(step, [], 85.0, Answer("gpu-oom", 0.6, 15))[0] == "host-oom"
    # a close resemblance still lends its rule's category, a loose one no longer does
    close, loose = (
        Near("x/close", "tokenizer-error", 90.0),
        Near("x/loose", "tokenizer-error", 75.0),
    )
    assert choose_category(plain, [close], 85.0, Answer("dependency-missing", 0.8, 5)) == (
        "tokenizer-error",
        close,
    )
    assert (
        choose_category(plain, [loose], 85.0, Answer("dependency-missing", 0.8, 5))[0]
        == "dependency-missing"
    )


def test_an_unrecognized_exception_takes_the_category_of_the_shipped_rules_words(tmp_path):
    """End to end: the words table of the shipped rules answers a failure that no rule and no
    word of the guess knows (an API another version removed, raised in user code)."""
    from tracelens.engine import parse_path
    from tracelens.rulebook.load import default_rules
    from tracelens.rulebook.rank import evaluate

    log = tmp_path / "job.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "/home/user/train.py", line 41, in <module>\n'
        "    cache.crop(max_len)\n"
        f'  File "{SITE}/transformers/cache_utils.py", line 612, in crop\n'
        "    self.layers_state.trim(max_len)\n"
        "AttributeError: 'DynamicCache' object has no attribute 'layers_state'. Did you mean: 'layers'?\n"
    )
    first = evaluate(parse_path(str(log)), default_rules())[0]
    assert first.rule_id == "unrecognized"
    assert first.category == "dependency-missing"


def test_symptom_rules_examples_are_not_known_failures():
    """A symptom rule's example log starts with another failure (the one the symptom follows):
    indexed under the symptom's category (worker-died), it would name that category for an
    unrecognized failure like the one before it."""
    from tracelens.rulebook.load import default_rules
    from tracelens.rulebook.nearest import index

    rules = default_rules()
    secondary = {lr.id for lr in rules.rules if lr.rule.secondary and lr.examples}
    assert secondary  # the shipped rules have symptom rules with examples
    indexed = {e.rule_id for e in index(rules)}
    assert indexed and not indexed & secondary


def test_the_nearest_lends_its_category_only_when_no_other_category_is_as_close():
    from tracelens.rulebook.nearest import Near
    from tracelens.rulebook.unrecognized import choose_category

    killed = _origin("killed", "", "failed (exitcode: -9) local_rank: 0 (pid: 1) of binary: /x")
    split = [Near("a/x", "gpu-kernel-fault", 100.0), Near("b/y", "nccl-error", 100.0)]
    assert choose_category(killed, split, 85.0)[0] == "host-oom"  # the guess: a kill
    agreed = [Near("a/x", "gpu-kernel-fault", 100.0), Near("b/y", "gpu-kernel-fault", 90.0)]
    assert choose_category(killed, agreed, 85.0)[0] == "gpu-kernel-fault"
    below = [Near("a/x", "gpu-kernel-fault", 95.0), Near("b/y", "nccl-error", 60.0)]
    assert choose_category(killed, below, 85.0)[0] == "gpu-kernel-fault"


def test_a_failure_raised_while_a_package_was_imported_is_a_dependency():
    from tracelens.parse.frames import importing

    def module_level(file: str, source: str) -> Frame:
        return Frame(file=file, lineno=1, function="<module>", source=source)

    script = module_level("/home/user/train.py", "import unsloth")
    package = module_level(f"{SITE}/unsloth/models/rl.py", "patch_functions()")
    inner = Frame(file=f"{SITE}/unsloth/models/rl.py", lineno=12, function="patch_functions")
    assert importing([script, package, inner])
    # a package's module run as __main__ (python -m): runpy's frame before it, no import line
    runpy = Frame(
        file="<frozen runpy>", lineno=88, function="_run_code", source="exec(code, run_globals)"
    )
    server = module_level(
        f"{SITE}/vllm/entrypoints/openai/api_server.py", "uvloop.run(run_server(args))"
    )
    assert not importing([runpy, server, inner])
    # the user's own module imported by the user's script: not an installed package
    assert not importing([script, module_level("/home/user/mylib.py", "setup()")])
    origin = _origin(
        "exception", "IndexError", "list index out of range", frame=inner, importing=True
    )
    assert guess_category(origin) == "dependency-missing"

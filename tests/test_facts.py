"""Facts: a table of log lines and the facts they must yield."""

from __future__ import annotations

import textwrap

import pytest

from tracelens.engine import parse

CASES = {
    "a PyTorch banner": (
        "2025-06-01 10:00:01 INFO  PyTorch 2.7.0+cu126, CUDA 12.6, cuDNN 90501\n",
        {"torch_version": "2.7.0+cu126"},
    ),
    "pip's resolver conflict": (
        "ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. "
        "This behaviour is the source of the following dependency conflicts.\n"
        "sglang 0.5.19 requires transformers==5.12.1, but you have transformers 4.57.6 which is incompatible.\n"
        "vllm 0.6.0 requires torch==2.4.0, but you have torch 2.5.1 which is incompatible.\n",
        {"transformers_version": "4.57.6", "torch_version": "2.5.1"},
    ),
    "pynccl's nccl version": (
        "INFO 11-02 10:00:01 [pynccl.py:70] vLLM is using nccl==2.21.5\n",
        {"nccl_version": "2.21.5"},
    ),
    "nccl wheel in pip list": (
        "nvidia-nccl-cu12          2.27.3\n",
        {"nccl_version": "2.27.3"},
    ),
    "pip list rows": (
        "Package                  Version\n------------------------ ------------\ntorch                    2.10.0+cu128\ntransformers             4.56.0\n",
        {"torch_version": "2.10.0+cu128", "transformers_version": "4.56.0"},
    ),
    "a script's version line": (
        "2026-02-03 10:14:51 | INFO | recipes | torch 2.10.0+cu128, transformers 4.57.3\n",
        {"torch_version": "2.10.0+cu128", "transformers_version": "4.57.3"},
    ),
    "conda list row": (
        "pytorch                   2.5.1           py3.11_cuda12.4_cudnn9.1.0_0    pytorch\n",
        {"torch_version": "2.5.1"},
    ),
    "vllm v1 banner": (
        "INFO 01-20 13:03:40 [core.py:58] Initializing a V1 LLM engine (v0.16.0rc2.dev313+g4a1d5c2e9) with config: "
        "model='/models/nvidia/Kimi-K2.5-NVFP4', speculative_config=None, tokenizer='/models/nvidia/Kimi-K2.5-NVFP4', "
        "trust_remote_code=True, dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=8, "
        "pipeline_parallel_size=1, data_parallel_size=1, quantization=modelopt_fp4, enforce_eager=False, "
        "kv_cache_dtype=fp8_e4m3, device_config=cuda",
        {
            "vllm_version": "0.16.0rc2.dev313+g4a1d5c2e9",
            "model": "/models/nvidia/Kimi-K2.5-NVFP4",
            "model_path": "/models/nvidia/Kimi-K2.5-NVFP4",
            "dtype": "torch.bfloat16",
            "max_model_len": "131072",
            "tensor_parallel_size": "8",
            "quantization": "modelopt_fp4",
            "kv_cache_dtype": "fp8_e4m3",
            "trust_remote_code": "True",
        },
    ),
    "non-default args vs effective config": (
        "(APIServer pid=1) INFO 01-20 13:03:40 [utils.py:253] non-default args: {'model_tag': '/m', "
        "'model': '/m', 'kv_cache_dtype': 'auto', 'tensor_parallel_size': 4}\n"
        "(EngineCore_DP0 pid=2) INFO 01-20 13:03:45 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with "
        "config: model='/m', tensor_parallel_size=4, kv_cache_dtype=fp8_e4m3, device_config=cuda",
        {
            "kv_cache_dtype_arg": "auto",
            "kv_cache_dtype": "fp8_e4m3",
            "tensor_parallel_size": "4",
            "vllm_version": "0.11.0",
        },
    ),
    "argparse namespace (older vLLM)": (
        "INFO 03-11 09:14:05 [api_server.py:1044] args: Namespace(model_tag='/m', port=8000, model='/m', "
        "kv_cache_dtype='fp8', tensor_parallel_size=2, max_model_len=4096)",
        {
            "kv_cache_dtype_arg": "fp8",
            "tensor_parallel_size": "2",
            "max_model_len": "4096",
            "model": "/m",
        },
    ),
    "sglang server args": (
        "[2025-04-10 02:11:40] server_args=ServerArgs(model_path='/models/ds-v3', tokenizer_path='/models/ds-v3', "
        "dtype='auto', kv_cache_dtype='auto', quantization=None, context_length=32768, port=30000, "
        "mem_fraction_static=0.92, tp_size=8, dp_size=1)",
        {
            "model": "/models/ds-v3",
            "model_path": "/models/ds-v3",
            "tensor_parallel_size": "8",
            "mem_fraction_static": "0.92",
            "max_model_len": "32768",
            "kv_cache_dtype_arg": "auto",
        },
    ),
    "command line": (
        "$ vllm serve /models/llama --tensor-parallel-size 2 --kv-cache-dtype=fp8 --max-model-len 8192",
        {
            "model": "/models/llama",
            "model_path": "/models/llama",
            "tensor_parallel_size": "2",
            "kv_cache_dtype_arg": "fp8",
            "max_model_len": "8192",
        },
    ),
    "attention selector payload": (
        "ValueError: No valid attention backend found for cuda with AttentionSelectorConfig(head_size=576, "
        "dtype=torch.bfloat16, kv_cache_dtype=fp8_e4m3, block_size=None, use_mla=True, has_sink=False, "
        "use_sparse=False). Reasons: {FLASH_ATTN_MLA: [compute capability not supported], "
        "TRITON_MLA: [kv_cache_dtype not supported]}.",
        {
            "head_size": "576",
            "use_mla": "True",
            "kv_cache_dtype": "fp8_e4m3",
            "use_sparse": "False",
            "rejected_backends": "FLASH_ATTN_MLA,TRITON_MLA",
            "rejected.TRITON_MLA": "kv_cache_dtype not supported",
        },
    ),
    "collect_env": (
        """\
        Collecting environment information...
        PyTorch version: 2.9.1+cu128
        CUDA used to build PyTorch: 12.8
        Python version: 3.12.11 (main, Jun  4 2025, 08:56:18) [GCC 11.4.0] (64-bit runtime)
        Is CUDA available: True
        CUDA runtime version: 12.8.93
        GPU models and configuration:
        GPU 0: NVIDIA H200
        GPU 1: NVIDIA H200

        Nvidia driver version: 570.133.20
        [pip3] torch==2.9.1+cu128
        [pip3] transformers==4.57.6
        [pip3] triton==3.5.1
        vLLM Version: 0.11.2
        """,
        {
            "torch_version": "2.9.1+cu128",
            "cuda_version": "12.8",
            "python_version": "3.12.11",
            "gpu_name": "NVIDIA H200",
            "gpu_count": "2",
            "compute_capability": "9.0",
            "driver_version": "570.133.20",
            "transformers_version": "4.57.6",
            "triton_version": "3.5.1",
            "vllm_version": "0.11.2",
        },
    ),
    "deepspeed banner": (
        "[2025-03-26 11:49:01,311] [INFO] [logging.py:128:log_dist] [Rank 0] DeepSpeed info: "
        "version=0.15.4, git-hash=unknown, git-branch=unknown",
        {"deepspeed_version": "0.15.4"},
    ),
    "ds_report and pip lists": (
        """\
        deepspeed info ................... 0.14.5+unknown, unknown, unknown
        [pip3] transformer_engine_torch==2.1.0
        [pip3] megatron-core==0.12.1
        """,
        {
            "deepspeed_version": "0.14.5+unknown",
            "transformer_engine_version": "2.1.0",
            "megatron_core_version": "0.12.1",
        },
    ),
    "nvidia-smi table": (
        """\
        +-----------------------------------------------------------------------------------------+
        | NVIDIA-SMI 570.133.20             Driver Version: 570.133.20     CUDA Version: 12.8     |
        |-----------------------------------------+------------------------+----------------------+
        |   0  NVIDIA RTX PRO 6000 Blackwell Server Edition  On  |   00000000:18:00.0 Off |  0 |
        """,
        {
            "driver_version": "570.133.20",
            "gpu_name": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
            "compute_capability": "12.0",
        },
    ),
    "nvidia-smi query csv": (
        """\
        $ nvidia-smi --query-gpu=name,compute_cap --format=csv
        name, compute_cap
        NVIDIA A100-SXM4-80GB, 8.0
        """,
        {"compute_capability": "8.0"},
    ),
    "torch capability warning": (
        "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
        {"compute_capability": "12.0"},
    ),
    "torchrun root cause": (
        """\
        Root Cause (first observed failure):
        [0]:
          time      : 2024-06-01_10:00:05
          host      : node-1
          rank      : 3 (local_rank: 3)
          exitcode  : -9 (pid: 1234)
          error_file: <N/A>
          traceback : Signal 9 (SIGKILL) received by PID 1234
        """,
        {"host": "node-1", "failed_rank": "3", "exit_code": "-9", "signal": "SIGKILL"},
    ),
    "torchrun root cause after other failures": (
        """\
        Failures:
        [1]:
          time      : 2024-06-01_10:00:06
          host      : node-2
          rank      : 1 (local_rank: 1)
          exitcode  : 1 (pid: 1235)
        ------------------------------------------------------------
        Root Cause (first observed failure):
        [0]:
          time      : 2024-06-01_10:00:05
          host      : node-1
          rank      : 0 (local_rank: 0)
          exitcode  : -9 (pid: 1234)
          traceback : Signal 9 (SIGKILL) received by PID 1234
        """,
        {"failed_rank": "0", "exit_code": "-9", "host": "node-1", "signal": "SIGKILL"},
    ),
    "a shell's Killed line echoes the script's variables unexpanded": (
        "./serve.sh: line 19: 867080 Killed                  python -m sglang.launch_server --model-path $MODEL_PATH --tp-size 4 --port ${PORT}",
        {"model": None, "tensor_parallel_size": "4"},
    ),
    "a launcher's negative exit code is the signal that killed the process": (
        "[2023-07-20 08:31:52,773] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'main.py', '--local_rank=3'] exits with return code = -7",
        {"exit_code": "-7", "signal": "SIGBUS"},
    ),
    "accelerate env / transformers env lists": (
        """
        - `Accelerate` version: 0.34.0
        - Python version: 3.10.12
        - PyTorch version (GPU?): 2.4.0+cu124 (True)
        - `transformers` version: 4.44.2
        """,
        {
            "accelerate_version": "0.34.0",
            "python_version": "3.10.12",
            "torch_version": "2.4.0+cu124",
            "transformers_version": "4.44.2",
        },
    ),
    "a version at the end of a sentence": (
        "ImportError: vllm>=0.4.3,<=0.7.3 is required for a normal functioning of this module, but found vllm==0.8.1.",
        {"vllm_version": "0.8.1"},
    ),
    "oom message": (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.05 GiB is free.",
        {"gpu_memory_total": "79.19 GiB"},
    ),
    "torch 2.10+'s GPU capability warning": (
        "UserWarning: Found GPU0 Tesla V100-SXM2-32GB which is of compute capability (CC) 7.0.\n",
        {"compute_capability": "7.0", "gpu_name": "Tesla V100-SXM2-32GB"},
    ),
    "ranks timed out in different collectives": (
        """\
        [rank2]:[E1002 16:04:30.852 ProcessGroupNCCL.cpp:685] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1116, OpType=ALLREDUCE, NumelIn=675840, NumelOut=675840, Timeout(ms)=600000) ran for 600071 milliseconds before timing out.
        [rank0]:[E1002 16:04:31.104 ProcessGroupNCCL.cpp:685] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1121, OpType=ALLREDUCE, NumelIn=544997376, NumelOut=544997376, Timeout(ms)=600000) ran for 600009 milliseconds before timing out.
        """,
        {
            "collective_timeout": "SeqNum=1116 ALLREDUCE NumelIn=675840",
            "collectives_differ": "SeqNum=1116 ALLREDUCE NumelIn=675840 / SeqNum=1121 ALLREDUCE NumelIn=544997376",
        },
    ),
    "ranks timed out in the same collective": (
        """\
        [rank1]:[E1206 09:51:27.883 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1763, OpType=ALLREDUCE, NumelIn=132120576, NumelOut=132120576, Timeout(ms)=1800000) ran for 1800061 milliseconds before timing out.
        [rank3]:[E1206 09:51:27.901 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1763, OpType=ALLREDUCE, NumelIn=132120576, NumelOut=132120576, Timeout(ms)=1800000) ran for 1800058 milliseconds before timing out.
        """,
        {
            "collective_timeout": "PG 0 SeqNum=1763 ALLREDUCE NumelIn=132120576",
            "collectives_differ": None,
        },
    ),
    "two process groups, one collective each (torch 1.x: no element counts)": (
        """\
        [PG ID 0 PG GUID 0(default_pg) Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=20, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600061 milliseconds before timing out.
        [PG ID 2 PG GUID 5 Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=BROADCAST, Timeout(ms)=600000) ran for 600070 milliseconds before timing out.
        """,
        {"collective_timeout": "PG 0 SeqNum=20 ALLREDUCE NumelIn=8", "collectives_differ": None},
    ),
    "a broadcast's root one collective ahead, an all-to-all's uneven splits": (
        """\
        [PG ID 3 PG GUID 3 Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5730, OpType=BROADCAST, NumelIn=3612672, NumelOut=3612672, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.
        [PG ID 3 PG GUID 3 Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5729, OpType=BROADCAST, NumelIn=3612672, NumelOut=3612672, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.
        [PG ID 4 PG GUID 4 Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88, OpType=ALLTOALL_BASE, NumelIn=4096, NumelOut=5120, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.
        [PG ID 4 PG GUID 4 Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88, OpType=ALLTOALL_BASE, NumelIn=6144, NumelOut=3072, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.
        """,
        {"collectives_differ": None},
    ),
    "vLLM's CUDA graph mode and speculative method in the engine config (repr)": (
        "INFO 03-02 10:00:00 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='m', speculative_config=SpeculativeConfig(method='eagle3', model='d', "
        "num_spec_tokens=3), compilation_config={'level': 3, 'cudagraph_mode': "
        "<CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>, 'use_inductor_graph_partition': False}\n",
        {"cudagraph_mode": "FULL_AND_PIECEWISE", "speculative_method": "eagle3"},
    ),
    "vLLM's CUDA graph mode as JSON numbers": (
        'compilation_config={"level":3,"cudagraph_mode":[2,0],"use_cudagraph":true}\n',
        {"cudagraph_mode": "FULL_DECODE_ONLY"},
    ),
    "the mode and method asked for (non-default args)": (
        "non-default args: {'model': 'm', 'speculative_config': {'method': 'mtp', "
        "'num_speculative_tokens': 1}, 'compilation_config': {'cudagraph_mode': 'PIECEWISE'}}\n",
        {"cudagraph_mode": "PIECEWISE", "speculative_method": "mtp"},
    ),
    "sglang.check_env's compute capability": (
        "GPU 0,1: NVIDIA RTX PRO 6000 Blackwell Workstation Edition\n"
        "GPU 0,1 Compute Capability: 12.0\n",
        {"compute_capability": "12.0"},
    ),
    "a capability a program requires is not the device's": (
        "Minimum Compute Capability: 8.0 required\n",
        {"compute_capability": None},
    ),
    "SGLang's speculative algorithm": (
        "ServerArgs(model_path='m', speculative_algorithm='EAGLE3', tp_size=1)\n",
        {"speculative_method": "EAGLE3"},
    ),
    "no CUDA graph mode in a null": (
        'compilation_config={"cudagraph_mode":null,"level":0}\n',
        {"cudagraph_mode": None},
    ),
    "vLLM V0's engine line": (
        "INFO 02-10 10:00:00 llm_engine.py:232] Initializing a V0 LLM engine (v0.7.2) with config: model='x'\n",
        {"vllm_version": "0.7.2"},
    ),
    "a version that ends a sentence": (
        "torch 2.6.0. Copied from the notebook\nPyTorch 2.6.0. Then\n",
        {"torch_version": "2.6.0"},
    ),
    "pip's chain of requirements": (
        "INFO: pip is looking at multiple versions of xformers (from torch==2.10.0->vllm==0.16.0) to determine\n",
        {"torch_version": "2.10.0", "vllm_version": "0.16.0"},
    ),
    "a nightly's dotted version": (
        "torch 2.6.0.dev20250101 nightly\n",
        {"torch_version": "2.6.0.dev20250101"},
    ),
    "a Hugging Face script's --model_name_or_path": (
        "accelerate launch sft.py --model_name_or_path Qwen/Qwen2.5-7B-Instruct --bf16 True\n",
        {"model": "Qwen/Qwen2.5-7B-Instruct", "model_path": None},
    ),
    "the dashed flag with '=' (a local path)": (
        "trl sft --model-name-or-path=/models/llama-3-8b --dataset_name data\n",
        {"model": "/models/llama-3-8b", "model_path": "/models/llama-3-8b"},
    ),
    "a script's argv as a Python list": (
        "['train.py', '--model_name_or_path', '/models/llama-13b', '--fp16']\n",
        {"model_path": "/models/llama-13b"},
    ),
    "the arguments dataclass's repr": (
        "ModelConfig(model_name_or_path='meta-llama/Llama-3.1-8B', model_revision='main')\n",
        {"model": "meta-llama/Llama-3.1-8B"},
    ),
    "a YAML config": (
        "model_name_or_path: /models/Qwen2.5-1.5B-Instruct\n",
        {"model_path": "/models/Qwen2.5-1.5B-Instruct"},
    ),
    "torch's advice about a release is no version": (
        "UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch "
        "1.1.0 and later, you should call them in the opposite order\n",
        {"torch_version": None},
    ),
    "an installed PyTorch named in an error": (
        "ERROR! Intel® Extension for PyTorch* needs to work with PyTorch 2.8.*, but PyTorch "
        "2.7.1+xpu is found.\n",
        {"torch_version": "2.7.1+xpu"},
    ),
    "the Hub's download command": (
        "$ huggingface-cli download meta-llama/Llama-3.1-8B-Instruct --local-dir /models/l\n",
        {"model": "meta-llama/Llama-3.1-8B-Instruct"},
    ),
    "hf download, flags first": (
        "user@node-1:~$ hf download --quiet Qwen/Qwen2.5-7B-Instruct\n",
        {"model": "Qwen/Qwen2.5-7B-Instruct"},
    ),
    "a frame's source line is no model": (
        "    model = AutoModel.from_pretrained(model_args.model_name_or_path, **kwargs)\n"
        "    return cls.from_pretrained(pretrained_model_name_or_path=pretrained_model_name_or_path)\n",
        {"model": None},
    ),
    "nvidia-smi's CSV query": (
        "$ nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv,noheader\n"
        "0, NVIDIA GeForce RTX 4090, 21786 MiB, 24564 MiB\n"
        "1, NVIDIA GeForce RTX 4090, 21790 MiB, 24564 MiB\n",
        {"gpu_name": "NVIDIA GeForce RTX 4090", "gpu_count": "2"},
    ),
    "nvidia-smi's CSV query of older cards (each brand a trigger of its own)": (
        "name, compute_cap\nTesla V100-SXM2-32GB, 7.0\nQuadro RTX 8000, 7.5\n",
        {"gpu_name": "Tesla V100-SXM2-32GB", "compute_capability": "7.0"},
    ),
    "a script's device line among others": (
        "torch 2.6.0+cu124 | transformers 4.49.0 | GPU: NVIDIA L4 (23034 MiB, 58 SMs)\n",
        {"gpu_name": "NVIDIA L4", "torch_version": "2.6.0+cu124"},
    ),
    "a script's own device line": (
        "device: NVIDIA GeForce RTX 3090 (cuda:0)\n",
        {"gpu_name": "NVIDIA GeForce RTX 3090"},
    ),
    "a sentence naming a GPU is no device line": (
        "We saw the same on a device that NVIDIA GeForce RTX 3090 owners reported\n",
        {"gpu_name": None},
    ),
    "a sentence about the company is no GPU": (
        "NVIDIA, the vendor, ships drivers, 5 MiB\n",
        {"gpu_name": None},
    ),
    "the vLLM image a pod pulled": (
        '  Normal  Pulled  2m  kubelet  Successfully pulled image "vllm/vllm-openai:v0.9.0" in 1m2s\n',
        {"vllm_version": "0.9.0"},
    ),
    "the SGLang image of a docker command": (
        "$ docker run --gpus all --shm-size 32g lmsysorg/sglang:v0.4.6.post1-cu124 "
        "python3 -m sglang.launch_server --model-path m\n",
        {"sglang_version": "0.4.6.post1"},
    ),
    "the PyTorch image of a manifest, not NGC's release month": (
        "    image: pytorch/pytorch:2.1.0-cuda11.8-cudnn8-devel\n"
        "    image: nvcr.io/nvidia/pytorch:24.05-py3\n",
        {"torch_version": "2.1.0"},
    ),
    "torch's capability pair as a script prints it": (
        "device: cuda:0 Tesla P100-PCIE-16GB capability (6, 0)\n",
        {"compute_capability": "6.0"},
    ),
    "get_device_capability() printed with its name": (
        "torch.cuda.get_device_capability() = (8, 6)\n",
        {"compute_capability": "8.6"},
    ),
    "a Marlin kernel chosen at runtime": (
        "INFO 06-01 10:00:00 awq_marlin.py:113] The model is convertible to awq_marlin during "
        "runtime. Using awq_marlin kernel.\n",
        {"quantization": "awq_marlin"},
    ),
}


@pytest.mark.parametrize("text,expected", CASES.values(), ids=list(CASES))
def test_facts(text, expected):
    doc = parse(textwrap.dedent(text))
    facts = {n: f.value for n, f in doc.fact_map().items()}
    assert {k: facts.get(k) for k in expected} == expected


def test_each_fact_knows_its_line():
    doc = parse("hello\nINFO 01-20 13:03:40 [api_server.py:1] vLLM API server version 0.16.0\n")
    fact = doc.fact_map()["vllm_version"]
    assert (fact.line, fact.value) == (2, "0.16.0")
    assert "vLLM API server version" in fact.text


def test_payloads_are_structured():
    doc = parse(CASES["attention selector payload"][0])
    assert doc.payloads["backend_reasons"] == {
        "FLASH_ATTN_MLA": ["compute capability not supported"],
        "TRITON_MLA": ["kv_cache_dtype not supported"],
    }
    assert doc.payloads["attention_selector"]["use_mla"] == "True"


def test_exception_line_printed_alone_keeps_its_continuation():
    from tracelens.parse.document import iter_exceptions

    doc = parse(
        "RuntimeError: Failed to import transformers.models.x.modeling_x because of the following error:\n"
        "/opt/lib/flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
        "INFO 01-20 13:03:40 [x.py:1] next record\n"
    )
    ((exc, _tb),) = list(iter_exceptions(doc))
    assert exc.message.splitlines() == [
        "Failed to import transformers.models.x.modeling_x because of the following error:",
        "/opt/lib/flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
    ]


def test_an_indented_message_block_continues_past_three_lines():
    from tracelens.parse.document import iter_exceptions

    doc = parse(
        "RuntimeError: Version mismatch: The cluster was started with:\n"
        "    Ray: 2.43.0\n"
        "    Python: 3.11.10\n"
        "This process on node 10.0.0.5 was started with:\n"
        "    Ray: 2.44.1\n"
        "    Python: 3.11.10\n"
        "unrelated line one\n"
        "unrelated line two\n"
        "unrelated line three\n"
    )
    ((exc, _tb),) = list(iter_exceptions(doc))
    assert exc.message.splitlines()[-2:] == ["Ray: 2.44.1", "Python: 3.11.10"]
    assert "unrelated line three" not in exc.message


@pytest.mark.parametrize(
    "line",
    [
        "with torch 2.1 the scheduler API changed",  # prose, no full version
        "upgrading torch to 2.6.0 fixed it for me",  # not the installed version's line
        "requires torch>=2.4.0",
    ],
)
def test_versions_in_prose_are_not_facts(line):
    assert "torch_version" not in {f.name for f in parse(line + "\n").facts}


@pytest.mark.parametrize(
    "line",
    [
        "AssertionError: Device compute capability 8.9 or higher required for FP8 execution.",
        "ValueError: FP8 needs compute capability 9.0+ (this kernel)",
    ],
)
def test_a_required_compute_capability_is_not_the_devices(line):
    assert "compute_capability" not in {f.name for f in parse(line + "\n").facts}


def test_the_devices_compute_capability_is_read():
    doc = parse("Found GPU0 NVIDIA GeForce RTX 3090 which is of compute capability 8.6\n")
    assert doc.fact_map()["compute_capability"].value == "8.6"


@pytest.mark.parametrize(
    "line,etype",
    [
        ("zipfile.BadZipFile: File is not a zip file", "zipfile.BadZipFile"),
        ("io.UnsupportedOperation: fileno", "io.UnsupportedOperation"),
        (
            "subprocess.TimeoutExpired: Command '['nvidia-smi']' timed out after 10 seconds",
            "subprocess.TimeoutExpired",
        ),
    ],
)
def test_a_standard_library_exception_not_named_error_printed_alone_is_a_failure(line, etype):
    from tracelens.parse.document import iter_exceptions

    doc = parse(f"saving the checkpoint\n{line}\n")
    assert [exc.type for exc, _tb in iter_exceptions(doc)] == [etype]
    assert [e.kind for e in doc.errors] == ["exception"]

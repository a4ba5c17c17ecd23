"""Advice of shipped rules that depends on what the log shows the job already did."""

from __future__ import annotations

import pytest

from tracelens.engine import diagnose

OOM = (
    "Traceback (most recent call last):\n"
    '  File "/home/user/train.py", line 80, in <module>\n'
    "    loss.backward()\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.19 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process "
    "has 78.12 GiB memory in use. Of the allocated memory 70.10 GiB is allocated by PyTorch, and "
    "6.50 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
    "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
    "documentation for Memory Management  "
    "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n"
)
FRAGMENTATION = "Reduce fragmentation of the caching allocator"


@pytest.mark.parametrize(
    ("before", "already_on"),
    [
        ("", False),  # only the allocator's own advice mentions it
        ("+ export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n", True),
        ("C:\\work>set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n", True),
        (
            "docker run --gpus all -e PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.6,"
            "expandable_segments:True -e HF_HOME=/data img\n",
            True,
        ),
        (
            "env: {'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True', 'OMP_NUM_THREADS': '8'}\n",
            True,
        ),
        ("+ export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False\n", False),
    ],
    ids=["advice-only", "export", "windows-set", "docker-e", "dict", "set-false"],
)
def test_oom_advice_to_set_expandable_segments_only_when_not_already_set(before, already_on):
    d = diagnose(before + OOM).diagnoses[0]
    assert d.rule_id == "torch/gpu-oom"
    titles = [r.title for r in d.remedies]
    assert (FRAGMENTATION in titles) is not already_on, titles
    assert any("already ran with expandable segments" in n for n in d.notes) is already_on

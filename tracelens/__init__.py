"""tracelens: root causes for LLM-serving and PyTorch/CUDA/NCCL crash logs."""

__version__ = "0.1.0"

__all__ = ["__version__", "diagnose"]


def diagnose(data, rules=None, source="-"):
    """Diagnose a log (str or bytes); see :func:`tracelens.engine.diagnose`."""
    from tracelens.engine import diagnose as _diagnose

    return _diagnose(data, rules, source)

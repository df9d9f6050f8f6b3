"""devplace_export: a torch.nn.Module and example inputs -> a devplace.graph/1 operator graph.

    from devplace_export import export_model
    doc = export_model(model, (x,), name="resnet18_mbs2")   # a dict; json.dump it

Capture with torch.export where the installed torch has it, torch.fx otherwise; operator times
from a profiled real fwd+bwd step (torch.profiler, autograd sequence numbers) or, with
estimate="h100" | "a100" | "v100", from an analytic FLOPs / bytes model. See python/README.md.
"""

# The names below come from .api, which imports torch; they are loaded on first use (PEP 562), so
# that `python3 -m devplace_export` can look for an interpreter that has torch before needing it.
__all__ = ["export_model", "write_graph", "CaptureError", "DEVICES", "has_torch_export"]


def __getattr__(name):
    if name in __all__:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

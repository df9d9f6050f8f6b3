"""Capture a torch.nn.Module as a torch.fx GraphModule of operators.

Two paths: ``torch.export`` (aten operators) where the installed torch has it, and
``torch.fx.symbolic_trace`` (torch functions, tensor methods and leaf modules) otherwise. Either
way the result is a GraphModule whose call_function / call_method / call_module nodes are the
operators of the devplace graph.
"""
import dis
import inspect
import traceback

import torch
import torch.fx


class CaptureError(RuntimeError):
    """The model cannot be captured as a static graph; the message names the operator."""


def has_torch_export():
    try:
        import torch.export  # noqa: F401  (torch >= 2.1)
    except ImportError:
        return False
    return hasattr(torch.export, "export")


def _user_frame():
    """The innermost stack frame outside torch and this package: where the user's code stood."""
    for fr in reversed(traceback.extract_stack()[:-2]):
        f = fr.filename.replace("\\", "/")
        if "/torch/" in f or f.startswith("<") or any(
                f.endswith("devplace_export/" + m) for m in ("capture.py", "__init__.py", "__main__.py")):
            continue
        return f"{fr.filename}:{fr.lineno} ({fr.line.strip() if fr.line else fr.name})"
    return "unknown location"


def _describe(node):
    t = node.target
    if node.op == "call_module":
        what = f"module '{t}'"
    elif node.op == "call_method":
        what = f"Tensor.{t}"
    else:
        what = getattr(t, "__qualname__", None) or getattr(t, "__name__", None) or str(t)
        mod = getattr(t, "__module__", None)
        if mod in ("_operator", "operator"):
            what = f"operator.{what}"
        elif mod and mod.startswith("torch") and "." not in what:
            what = f"{mod}.{what}"
    return f"operator '{node.name}' ({what})"


class _Tracer(torch.fx.Tracer):
    """symbolic_trace, with a clear error where a traced value decides control flow."""

    def __init__(self, leaf_modules=()):
        super().__init__()
        self._leaf_types = tuple(leaf_modules)
        self._where = []

    def is_leaf_module(self, m, qualname):
        if self._leaf_types and isinstance(m, self._leaf_types):
            return True
        return super().is_leaf_module(m, qualname)

    def call_module(self, m, forward, args, kwargs):
        self._where.append(self.path_of_module(m) if m is not self.root else "")
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self._where.pop()

    def _fail(self, obj, use, why):
        where = next((w for w in reversed(self._where) if w), "")
        inside = f" inside module '{where}'" if where else ""
        raise CaptureError(
            f"cannot trace: the value of {_describe(obj.node)}{inside} is used as {use} at {_user_frame()}; "
            f"{why}. Make it static (a Python constant or a fixed shape), or keep the module that does it "
            f"as one operator (--leaf pkg.mod:Class)")

    def to_bool(self, obj):
        self._fail(obj, "a condition (if / while / bool())",
                   "data-dependent control flow: tracing records one path and cannot follow a decision "
                   "on tensor values")

    def iter(self, obj):
        # `a, b = proxy`: torch.fx finds the UNPACK_SEQUENCE by instruction index, which is wrong on
        # Python >= 3.11 (inline caches); find it by byte offset instead.
        fr = inspect.currentframe().f_back.f_back
        if fr is not None:
            for ins in dis.get_instructions(fr.f_code):
                if ins.offset == fr.f_lasti:
                    if ins.opname == "UNPACK_SEQUENCE":
                        return iter([obj[i] for i in range(ins.argval)])
                    break
        self._fail(obj, "an iterable (for / unpacking)", "tracing does not know its length")

    def keys(self, obj):
        self._fail(obj, "a mapping (** unpacking)", "tracing does not know its keys")


def capture_fx(model, leaf_modules=()):
    tracer = _Tracer(leaf_modules)
    graph = tracer.trace(model)
    name = model.__class__.__name__
    return torch.fx.GraphModule(tracer.root, graph, name)


def capture_export(model, example_inputs):
    """torch.export (training IR where available), unlifted back to a GraphModule with get_attr
    parameters so that it runs and differentiates like the original module."""
    import torch.export as te
    try:
        if hasattr(te, "export_for_training"):
            ep = te.export_for_training(model, tuple(example_inputs))
        else:
            ep = te.export(model, tuple(example_inputs))
    except Exception as e:  # dynamo/export errors: keep the first line, which names the operation
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CaptureError(f"torch.export failed ({type(e).__name__}): {first}. Data-dependent control "
                           f"flow cannot be exported; try --capture fx with --leaf for that module") from e
    gm = ep.module()
    if not isinstance(gm, torch.fx.GraphModule):
        raise CaptureError("torch.export: ExportedProgram.module() is not a GraphModule")
    return gm


def capture(model, example_inputs, method="auto", leaf_modules=()):
    """Returns (graph_module, description of the capture path)."""
    if method == "auto":
        method = "export" if has_torch_export() else "fx"
    if method == "export":
        if not has_torch_export():
            raise CaptureError(f"torch {torch.__version__} has no torch.export; use --capture fx")
        return capture_export(model, example_inputs), "torch.export"
    if method == "fx":
        return capture_fx(model, leaf_modules), "torch.fx symbolic_trace"
    raise ValueError(f"unknown capture method {method!r}")

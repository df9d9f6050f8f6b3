"""The exporter proper (needs torch); `devplace_export` re-exports what it lists in __all__."""
import json
import statistics
import os
import platform

import torch

from .capture import CaptureError, capture, has_torch_export
from .estimate import DEVICES, estimate
from .graph import build_graph
from .profile import measure_step, operator_nodes, profile_ops, record_shapes

__all__ = ["export_model", "write_graph", "CaptureError", "DEVICES", "has_torch_export"]


def _to(x, device, dtype):
    if isinstance(x, torch.Tensor):
        x = x.to(device)
        return x.to(dtype) if x.is_floating_point() and dtype is not None else x
    if isinstance(x, (list, tuple)):
        return type(x)(_to(y, device, dtype) for y in x)
    return x


def _device_name(device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"CPU: {cpu}, {torch.get_num_threads()} threads"


def export_model(model, example_inputs, *, name="model", model_label=None, micro_batch=None,
                 device="cpu", dtype=torch.float32, estimate_on=None, capture_method="auto",
                 reps=5, warmup=2, leaf_modules=(), log=None):
    """Captures, records and times `model` on `example_inputs` (a tuple; the first dimension of
    the first tensor is the micro-batch) and returns the devplace.graph/1 document as a dict."""
    device = torch.device(device)
    model = model.to(device)
    if dtype is not None:
        model = model.to(dtype)
    model.train()
    inputs = tuple(_to(x, device, dtype) for x in example_inputs)
    if micro_batch is None:
        micro_batch = next((t.shape[0] for t in inputs if isinstance(t, torch.Tensor) and t.dim() > 0), 1)
    gm, how = capture(model, inputs, capture_method, leaf_modules)
    rec = record_shapes(gm, inputs)
    ops = operator_nodes(gm)
    mods = dict(gm.named_modules())
    source = {
        "model": model_label or type(model).__name__,
        "micro_batch": int(micro_batch),
        "micro_batch_size": int(micro_batch),
        "input": ", ".join("x".join(str(d) for d in t.shape[1:]) or "scalar"
                           for t in inputs if isinstance(t, torch.Tensor)),
        "dtype": str(dtype).replace("torch.", "") if dtype is not None else "as built",
        "torch": torch.__version__,
        "capture": how,
        "exporter": "devplace_export (python/devplace_export)",
        "memory": "analytic: fwd_mem_bytes = bytes of outputs that are not views of an input, bwd_mem_bytes = bytes of the input and "
                  "parameter gradients the operator produces",
    }
    if estimate_on:
        est = [estimate(n, mods.get(n.target) if n.op == "call_module" else None, rec[n.name], estimate_on, dtype)
               for n in ops]
        fwd = [f for f, _ in est]
        bwd = [b for _, b in est]
        source.update({
            "device": DEVICES[estimate_on]["name"],
            "timing": f"analytic estimate for {estimate_on}: max(FLOPs / 60% of peak, bytes / 70% of "
                      f"memory bandwidth) + 5 us per operator; backward 2x; not measured",
            "op_sum_ms": round(sum(fwd) + sum(bwd), 6),
        })
    else:
        if log:
            log(f"profiling {len(ops)} operators on {device}: {warmup} warm-up + {reps} timed steps")
        step_ms, steps = measure_step(model, inputs, device, reps, warmup)
        prof = profile_ops(gm, inputs, device, reps, warmup)
        fwd, bwd = prof["fwd_ms"], prof["bwd_ms"]
        op_sum = sum(fwd) + sum(bwd)
        source.update({
            "device": _device_name(device),
            "timing": ("torch.profiler on one real fwd+bwd step per repetition; every event, backward "
                       "included, attributed to its forward operator by autograd sequence numbers; "
                       f"per-operator means of {reps} steps after {warmup} warm-ups"
                       + ("; CUDA kernel time (device time of the kernels under each operator)" if device.type == "cuda"
                          else "; CPU wall time, operator ranges tiling the step (the dispatch work before an "
                               "operator counts as its own)")),
            "repetitions": reps,
            "step_ms": round(prof["profiled_step_ms"], 6),
            "step_median_ms": round(prof["profiled_step_median_ms"], 6),
            "op_sum_ms": round(op_sum, 6),
            "step_ratio": round(statistics.median(prof["ratio_per_rep"]), 4),
            "strict_ratio": round(statistics.median(prof["strict_ratio_per_rep"]), 4),
            "unprofiled_step_ms": round(step_ms, 6),
            "unattributed_bwd_ms": round(prof["unattributed_bwd_ms"], 6),
        })
    return build_graph(gm, rec, fwd, bwd, name, source)


def write_graph(doc, path):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)

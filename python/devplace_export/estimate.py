"""Analytic operator times: FLOPs and bytes per operator kind against a device description.

time = max(FLOPs / (peak · 0.6), bytes / (memory bandwidth · 0.7)) + 5 µs per operator
(launch and dispatch). Backward: convolutions and matrix products do twice the forward FLOPs
(gradient of the input and of the weight); every other operator moves twice the forward bytes
(it reads the output gradient and what it saved, and writes the input gradient).

Peaks are the vendors' dense (no sparsity) figures. float32 convolutions use TF32 tensor cores
where the device has them (cuDNN's default in PyTorch, torch.backends.cudnn.allow_tf32 = True);
float32 matrix products use the FP32 CUDA cores (torch.backends.cuda.matmul.allow_tf32 = False
by default since PyTorch 1.12); float16 / bfloat16 use the tensor cores.
"""
import math
import operator

import torch

# TFLOP/s (dense) and TB/s; sources: NVIDIA H100 datasheet (SXM5), A100 datasheet (SXM4 80GB),
# V100 datasheet (SXM2).
DEVICES = {
    "h100": {"name": "NVIDIA H100 SXM5 80GB (analytic)", "fp32": 67.0, "tf32": 494.7, "fp16": 989.4,
             "mem_tbps": 3.35, "memory_bytes": 80 * 2**30},
    "a100": {"name": "NVIDIA A100 SXM4 80GB (analytic)", "fp32": 19.5, "tf32": 156.0, "fp16": 312.0,
             "mem_tbps": 2.039, "memory_bytes": 80 * 2**30},
    "v100": {"name": "NVIDIA V100 SXM2 32GB (analytic)", "fp32": 15.7, "tf32": None, "fp16": 125.0,
             "mem_tbps": 0.9, "memory_bytes": 32 * 2**30},
}
COMPUTE_EFF, MEMORY_EFF, OVERHEAD_MS = 0.6, 0.7, 0.005


def _name(node, module):
    if node.op == "call_module":
        return type(module).__name__.lower()
    if node.op == "call_method":
        return str(node.target).lower()
    t = node.target
    if t is operator.matmul:
        return "matmul"
    return (getattr(t, "__name__", None) or str(t)).lower()


def _numel(shape):
    return math.prod(shape) if shape else 1


def op_kind_flops(node, module, rec):
    """(kind, forward FLOPs) of one operator from its recorded input / output shapes.
    kind is 'conv', 'matmul' or 'memory'."""
    n = _name(node, module)
    ins, outs = rec["in"], rec["out"]
    out_el = sum(_numel(s) for s, _, _ in outs)
    if "conv" in n and outs:
        if module is not None and hasattr(module, "weight"):
            w = tuple(module.weight.shape)
        else:
            w = ins[1][0] if len(ins) > 1 else (1, 1)
        per_out = _numel(w[1:])  # (Cin / groups) · kernel
        if "transpose" in n:
            return "conv", 2.0 * _numel(ins[0][0]) * _numel(w[1:]) if ins else 0.0
        return "conv", 2.0 * _numel(outs[0][0]) * per_out
    if n in ("linear", "addmm", "mm", "bmm", "matmul", "baddbmm", "einsum") and ins and outs:
        k = ins[0][0][-1] if ins[0][0] else 1
        if n == "addmm" and len(ins) > 1:
            k = ins[1][0][-1]
        if n == "baddbmm" and len(ins) > 1:
            k = ins[1][0][-1]
        return "matmul", 2.0 * _numel(outs[0][0]) * k
    if "scaled_dot_product_attention" in n and ins:
        q, kk = ins[0][0], ins[1][0]
        return "matmul", 4.0 * _numel(q) * kk[-2]
    if n == "multiheadattention" and ins:
        L, N, E = ins[0][0] if len(ins[0][0]) == 3 else (ins[0][0][0], 1, ins[0][0][-1])
        return "matmul", 8.0 * L * N * E * E + 4.0 * L * L * N * E
    return "memory", float(out_el)


def estimate(node, module, rec, device, dtype):
    """(fwd_ms, bwd_ms) of one operator on `device` (a key of DEVICES)."""
    d = DEVICES[device]
    kind, flops = op_kind_flops(node, module, rec)
    half = dtype in (torch.float16, torch.bfloat16)
    if half:
        peak = d["fp16"]
    elif kind == "conv" and d["tf32"]:
        peak = d["tf32"]
    else:
        peak = d["fp32"]
    byts = sum(_numel(s) * es for s, _, es, _ in rec["in"]) + sum(_numel(s) * es for s, _, es in rec["out"])
    if module is not None:
        byts += sum(p.numel() * p.element_size() for p in module.parameters())
    t_c = flops / (peak * 1e12 * COMPUTE_EFF) * 1e3
    t_m = byts / (d["mem_tbps"] * 1e12 * MEMORY_EFF) * 1e3
    if kind == "memory":
        t_c = 0.0
    fwd = max(t_c, t_m) + OVERHEAD_MS
    bwd = max(2 * t_c, 2 * t_m) + OVERHEAD_MS
    needs_grad = any(rg for _, _, _, rg in rec["in"]) or (module is not None and any(p.requires_grad for p in module.parameters()))
    if not needs_grad:
        bwd = 0.0
    return fwd, bwd

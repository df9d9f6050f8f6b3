"""Run a captured GraphModule: record every operator's outputs (shapes, bytes) and profile real
fwd+bwd steps, attributing every event, backward included, to the forward operator it belongs to.

Attribution. Each operator runs inside a ``torch.profiler.record_function`` range named
``devplace::op::<index>``. Forward time of an operator is the duration of its range (its own
kernels and its share of Python dispatch). While it runs, autograd gives every differentiable
aten op it calls a sequence number, which the profiler records on the forward op events; the
backward node that autograd creates for it carries the same number, and so does the profiler
event of that backward node. The engine wraps each backward node in a top-level
``autograd::engine::evaluate_function: ...`` event: its duration is the backward time of the
operator that owns its sequence number. Sequence numbers are read from every event inside an
operator's range; a number seen by several ranges belongs to the last one (the counter only
moves on when an autograd node is created). Backward events that own no forward sequence number
(AccumulateGrad of parameters, the loss) are reported as unattributed.
On CUDA the same attribution sums the device time of the kernels under each event.
"""
import statistics
import time

import torch
import torch.fx
from torch.profiler import ProfilerActivity, profile, record_function

OP_KINDS = ("call_function", "call_method", "call_module")
_PREFIX = "devplace::op::"
_STEP = "devplace::step"
_BWD = "autograd::engine::evaluate_function: "


def tensor_bytes(x):
    if isinstance(x, torch.Tensor):
        return x.numel() * x.element_size()
    if isinstance(x, (list, tuple)):
        return sum(tensor_bytes(y) for y in x)
    if isinstance(x, dict):
        return sum(tensor_bytes(y) for y in x.values())
    return 0


def tensors_of(x):
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for y in x:
            yield from tensors_of(y)
    elif isinstance(x, dict):
        for y in x.values():
            yield from tensors_of(y)


def _storage_ptr(t):
    try:
        return t.untyped_storage().data_ptr()
    except AttributeError:  # torch < 2.0
        return t.storage().data_ptr()


class _Runner(torch.fx.Interpreter):
    def __init__(self, gm, index, record=None, mark=False):
        super().__init__(gm, garbage_collect_values=True)
        self.index = index          # node -> operator index
        self.record = record        # dict node name -> info, filled on a recording run
        self.mark = mark

    def run_node(self, n):
        i = self.index.get(n)
        if i is None:
            return super().run_node(n)
        if self.mark:
            with record_function(_PREFIX + str(i)):
                out = super().run_node(n)
        else:
            out = super().run_node(n)
        if self.record is not None:
            args = [self.env[a] for a in n.all_input_nodes if a in self.env]
            in_storages = {_storage_ptr(t) for a in args for t in tensors_of(a)}
            self.record[n.name] = {
                "out_bytes": tensor_bytes(out),
                "new_bytes": sum(t.numel() * t.element_size() for t in tensors_of(out)
                                 if _storage_ptr(t) not in in_storages),
                "in": [(tuple(t.shape), t.dtype, t.element_size(), t.requires_grad) for a in args for t in tensors_of(a)],
                "out": [(tuple(t.shape), t.dtype, t.element_size()) for t in tensors_of(out)],
            }
        return out


def operator_nodes(gm):
    return [n for n in gm.graph.nodes if n.op in OP_KINDS]


def _loss(out):
    ts = [t for t in tensors_of(out) if t.is_floating_point() and t.requires_grad]
    if not ts:
        raise RuntimeError("the model's output has no floating tensor that requires grad: nothing to differentiate")
    loss = ts[0].float().sum()
    for t in ts[1:]:
        loss = loss + t.float().sum()
    return loss


def record_shapes(gm, inputs):
    """One forward run recording each operator's inputs and outputs (shape, dtype, bytes)."""
    index = {n: i for i, n in enumerate(operator_nodes(gm))}
    rec = {}
    _Runner(gm, index, record=rec).run(*inputs)  # with autograd on: requires_grad is recorded
    return rec


def _clear_grads(model):
    for p in model.parameters():
        p.grad = None


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure_step(model, inputs, device, reps, warmup):
    """Median wall time (ms) of a real fwd+bwd step of the original module, without profiler."""
    times = []
    for r in range(warmup + reps):
        _clear_grads(model)
        _sync(device)
        if device.type == "cuda":
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            _loss(model(*inputs)).backward()
            b.record()
            torch.cuda.synchronize(device)
            ms = a.elapsed_time(b)
        else:
            t0 = time.perf_counter()
            _loss(model(*inputs)).backward()
            ms = (time.perf_counter() - t0) * 1e3
        if r >= warmup:
            times.append(ms)
    return statistics.median(times), times


def _dur_us(e, cuda):
    if cuda:  # device time of the kernels under the event (device_time_total from torch 2.4 on)
        t = getattr(e, "device_time_total", None)
        return t if t is not None else e.cuda_time_total
    return e.cpu_time_total


def profile_ops(gm, inputs, device, reps, warmup):
    """Profiles `reps` fwd+bwd steps of the GraphModule. Returns a dict with the per-operator mean
    fwd_ms / bwd_ms (lists by operator index), the mean and median profiled step, the per-step
    ratios of the operator sum to the step, and the unattributed backward time."""
    ops = operator_nodes(gm)
    index = {n: i for i, n in enumerate(ops)}
    runner = _Runner(gm, index, mark=True)
    cuda = device.type == "cuda"
    for _ in range(warmup):
        _clear_grads(gm)
        _loss(runner.run(*inputs)).backward()
    _sync(device)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=acts) as prof:
        for r in range(reps):
            _clear_grads(gm)
            _sync(device)
            with record_function(f"{_STEP}::{r}"):
                _loss(runner.run(*inputs)).backward()
                _sync(device)
    events = prof.events()
    fwd = [[0.0] * len(ops) for _ in range(reps)]
    bwd = [[0.0] * len(ops) for _ in range(reps)]
    step_us = [0.0] * reps
    unattributed = [0.0] * reps
    strict = [0.0] * reps

    steps = sorted((e for e in events if e.name.startswith(_STEP + "::")), key=lambda e: e.time_range.start)
    if len(steps) != reps:
        raise RuntimeError(f"profiler: expected {reps} step ranges, found {len(steps)}")

    def rep_of(e):
        t = e.time_range.start
        for r, s in enumerate(steps):
            if s.time_range.start <= t <= s.time_range.end:
                return r
        return None

    def descendants(e):
        stack = list(e.cpu_children)
        while stack:
            c = stack.pop()
            yield c
            stack.extend(c.cpu_children)

    for r, s in enumerate(steps):
        step_us[r] = s.cpu_time_total
    # forward: the operator ranges, in time order; sequence numbers inside them. On the CPU the
    # ranges tile the step: each operator also gets the time since the previous one ended (the
    # Python and dispatch work that leads to it); strict sums only the time inside the ranges.
    owner = [dict() for _ in range(reps)]
    prev_end = [s.time_range.start for s in steps]
    marks = sorted((e for e in events if e.name.startswith(_PREFIX)), key=lambda e: e.time_range.start)
    for e in marks:
        r = rep_of(e)
        if r is None:
            continue
        i = int(e.name[len(_PREFIX):])
        d = _dur_us(e, cuda)
        strict[r] += d
        if not cuda:
            d = e.time_range.end - min(prev_end[r], e.time_range.start)
            prev_end[r] = e.time_range.end
        fwd[r][i] += d
        for c in descendants(e):
            seq = getattr(c, "sequence_nr", -1)
            if seq is not None and 0 <= seq < (1 << 62):
                owner[r][seq] = i
    # backward: top-level evaluate_function events, each with the sequence number of its node,
    # tiled the same way on the CPU (from the start of the first backward event of the step)
    prev_end = [None] * reps
    bwd_events = sorted((e for e in events if e.name.startswith(_BWD) and not (
        e.cpu_parent is not None and e.cpu_parent.name.startswith(_BWD))), key=lambda e: e.time_range.start)
    for e in bwd_events:
        r = rep_of(e)
        if r is None:
            continue
        seqs = [e.sequence_nr] + [c.sequence_nr for c in descendants(e)]
        seqs = [q for q in seqs if q is not None and 0 <= q < (1 << 62)]
        i = next((owner[r][q] for q in seqs if q in owner[r]), None)
        d = _dur_us(e, cuda)
        if i is not None:
            strict[r] += d
        if not cuda:
            start = e.time_range.start if prev_end[r] is None else min(prev_end[r], e.time_range.start)
            d = e.time_range.end - start
            prev_end[r] = e.time_range.end
        if i is None:
            unattributed[r] += d
        else:
            bwd[r][i] += d
    med = lambda xs: statistics.median(xs)  # noqa: E731
    # Per-operator means over the steps, and the mean step. Not medians: on a loaded machine a
    # preemption lands on some operator in almost every step, so per-operator medians drop time
    # that every step has and their sum falls short of the step; the sum of the means is the mean
    # of the per-step sums, which the per-step ratio keeps close to the mean step.
    mean = statistics.fmean
    fwd_ms = [mean([fwd[r][i] for r in range(reps)]) / 1e3 for i in range(len(ops))]
    bwd_ms = [mean([bwd[r][i] for r in range(reps)]) / 1e3 for i in range(len(ops))]
    return {
        "fwd_ms": fwd_ms,
        "bwd_ms": bwd_ms,
        "profiled_step_ms": mean(step_us) / 1e3,
        "profiled_step_median_ms": med(step_us) / 1e3,
        "op_sum_per_rep_ms": [(sum(fwd[r]) + sum(bwd[r])) / 1e3 for r in range(reps)],
        "step_per_rep_ms": [s / 1e3 for s in step_us],
        "strict_ratio_per_rep": [strict[r] / step_us[r] for r in range(reps)],
        "ratio_per_rep": [(sum(fwd[r]) + sum(bwd[r])) / step_us[r] for r in range(reps)],
        "unattributed_bwd_ms": mean(unattributed) / 1e3,
    }

"""Turns a captured, recorded and timed GraphModule into a devplace.graph/1 document."""
import math
import operator

from .profile import operator_nodes


def op_label(node, module):
    if node.op == "call_module":
        return type(module).__name__.lower()
    if node.op == "call_method":
        return str(node.target)
    t = node.target
    packet = getattr(t, "_overloadpacket", None)  # aten OpOverload (torch.export)
    if packet is not None:
        return getattr(packet, "__name__", str(t)).split(".")[-1]
    return getattr(t, "__name__", None) or str(t)


def module_path(node):
    if node.op == "call_module":
        return str(node.target)
    stack = node.meta.get("nn_module_stack")
    if stack:
        last = list(stack.values())[-1] if isinstance(stack, dict) else stack[-1]
        return last[0] if isinstance(last, tuple) else str(last)
    return ""


def build_graph(gm, rec, fwd_ms, bwd_ms, name, source):
    ops = operator_nodes(gm)
    index = {n: i for i, n in enumerate(ops)}
    mods = dict(gm.named_modules())
    params = {id(p): p for p in gm.parameters()}
    seen = set()

    def own(tensors):
        b = 0
        for p in tensors:
            if id(p) in params and p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                b += p.numel() * p.element_size()
        return b

    def attr(target):
        obj = gm
        for part in str(target).split("."):
            obj = getattr(obj, part)
        return obj

    nodes, edges = [], []
    for i, n in enumerate(ops):
        m = mods.get(n.target) if n.op == "call_module" else None
        pb = own(m.parameters()) if m is not None else 0
        for a in n.all_input_nodes:  # parameters used directly (get_attr): owned by their first consumer
            if a.op == "get_attr":
                pb += own([attr(a.target)])
        r = rec[n.name]
        grad_in = sum(math.prod(s) * es for s, dt, es, rg in r["in"] if rg)
        nodes.append({
            "id": i, "name": n.name, "op": op_label(n, m),
            "fwd_ms": round(max(0.0, fwd_ms[i]), 6), "bwd_ms": round(max(0.0, bwd_ms[i]), 6),
            "fwd_mem_bytes": r["new_bytes"], "bwd_mem_bytes": grad_in + pb,
            "param_bytes": pb, "out_bytes": r["out_bytes"],
            "module": module_path(n),
        })
        for a in n.all_input_nodes:
            j = index.get(a)
            if j is None:
                continue
            b = r["out_bytes"] if n.target is operator.getitem else rec[a.name]["out_bytes"]
            edges.append({"src": j, "dst": i, "bytes": b})
    # parallel edges (an operator reading the same value twice) merged by adding bytes, as the reader does
    merged = {}
    for e in edges:
        k = (e["src"], e["dst"])
        merged[k] = merged.get(k, 0) + e["bytes"]
    edges = [{"src": s, "dst": d, "bytes": b} for (s, d), b in merged.items()]
    return {
        "format": "devplace.graph/1",
        "name": name,
        "source": source,
        "units": {"time": "ms", "memory": "bytes", "size": "bytes"},
        "nodes": nodes,
        "edges": edges,
    }

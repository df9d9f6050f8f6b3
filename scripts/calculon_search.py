#!/usr/bin/env python3
"""Calculon's own execution search (`llm-optimal-execution`), run unchanged on the part of its space
that devplace's `llm plan` also searches, so that the two searches can be timed on the same space
and Calculon's best evaluated by devplace beside devplace's own (docs/llm-results.md).

Calculon is not a dependency of devplace: this script only produces side-by-side tables. It imports
Calculon from --calculon (default ../shared/tools/calculon) and calls its search function,
`OptimalExecution.search`, on every parameter tuple that `llm-optimal-execution` builds, keeping
the tuples where both spaces agree:
  * the batch is exactly the global batch (Calculon takes the largest multiple of dp that is at
    most the batch; devplace needs micro-batch x dp to divide it);
  * no offloading (the system's second memory, mem2, is given 0 GiB), as devplace has none;
  * tensor_par_comm_type 'ar' (no sequence parallelism) or 'rs_ag' (sequence parallelism);
    Calculon's third kind, 'p2p_rs_ag', has no counterpart in devplace.
Inside each tuple Calculon's search loops as it always does (micro-batch sizes, overlaps, networks,
its all-gather redo). The output is Calculon's best execution(s) as JSON, with the search's wall
time, CPU time and execution counts.

  python3 scripts/calculon_search.py MODEL GPUS BATCH DTYPE SYSTEM OUT [-c CPUS] [-t TOP] [-m]
      [--max-tp T] [--max-pp P] [--max-vp V] [--recompute none,selective,full] [--count]
--count only counts the executions of the space (Calculon's debug loop, nothing evaluated).
"""
import argparse
import json
import multiprocessing as mp
import os
import sys
import time


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("gpus", type=int)
    p.add_argument("batch", type=int)
    p.add_argument("dtype")
    p.add_argument("system")
    p.add_argument("out")
    p.add_argument("-c", "--cpus", type=int, default=1)
    p.add_argument("-t", "--top", type=int, default=1)
    p.add_argument("-m", "--mbs-break", action="store_true", help="Calculon's -m: stop micro-batch sizes early")
    p.add_argument("--calculon", default=os.path.join(here, "..", "..", "shared", "tools", "calculon"))
    p.add_argument("--no-tp-overlap", action="store_true", help="Calculon's --no-tp-overlap")
    p.add_argument("--max-tp", type=int, default=0, help="as devplace llm plan --max-tp")
    p.add_argument("--max-pp", type=int, default=0, help="as devplace llm plan --max-pp")
    p.add_argument("--max-vp", type=int, default=0, help="as devplace llm plan --max-vp")
    p.add_argument("--recompute", default="none,selective,full", help="as devplace llm plan --recompute")
    p.add_argument("--count", action="store_true", help="only count the executions (nothing evaluated)")
    a = p.parse_args()

    sys.path.insert(0, os.path.abspath(a.calculon))
    try:
        import calculon
        from calculon.llm import Llm, System
        from calculon.llm.optimal_execution import OptimalExecution
        from calculon.util import pick
    except ImportError as e:
        sys.exit(f"calculon_search.py: cannot import Calculon from {a.calculon}: {e} "
                 "(it needs python3-pandas and python3-psutil)")

    names = {"none": "none", "selective": "attn_only", "full": "full"}
    recomputes = [names[r] for r in a.recompute.split(",")]
    within = lambda x, cap: cap == 0 or x <= cap
    app = Llm.Application(calculon.io.read_json_file(a.model))
    system_json = calculon.io.read_json_file(a.system)
    if "mem2" in system_json:
        system_json["mem2"]["GiB"] = 0  # no offload memory: devplace does not offload
    syst = System(system_json)
    params = []
    for tp in Llm.get_all_tensor_parallelisms(a.gpus, app.hidden, app.attn_heads):
        for pp in Llm.get_all_pipeline_parallelisms(a.gpus, tp, app.num_blocks):
            dp = Llm.get_data_parallelism(a.gpus, tp, pp)
            if not within(tp, a.max_tp) or not within(pp, a.max_pp):
                continue
            for ppint in Llm.get_valid_pipeline_interleavings(app.num_blocks, pp):
                if not within(ppint, a.max_vp):
                    continue
                batch = OptimalExecution.get_batch_size(dp, a.batch)
                if batch != a.batch:
                    continue
                for recompute in recomputes:
                    for sharding in pick(dp > 1, [True, False], [False]):
                        for comm in ["ar", "rs_ag"]:
                            params.append((a.count, a.top, False, a.gpus, a.batch, a.dtype, app, syst, tp, pp, dp,
                                           ppint, batch, recompute, sharding, comm, [True], a.mbs_break,
                                           not a.no_tp_overlap, True))
    start, cpu0 = time.time(), time.process_time()
    with mp.Pool(a.cpus) as pool:
        found = pool.starmap(OptimalExecution.search, params)
    wall = time.time() - start
    children = os.times()
    cpu = time.process_time() - cpu0 + children.children_user + children.children_system
    best, total, good = [], 0, 0
    for cbest, count, good_count, _bad, _tp, _pp in found:
        best = OptimalExecution.update_list(best, cbest, a.top)
        total += count
        good += good_count
    out = {"search_wall_s": wall, "search_cpu_s": cpu, "tuples": len(params), "executions": total,
           "good_executions": good,
           "best": [{"sample_rate": r[0], "execution": r[1], "block_fw_time": r[2].get("block_fw_time"),
                     "total_time": r[2].get("total_time")} for r in best]}
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"{len(params)} tuples, {total} executions ({good} fit) in {wall:.1f} s wall, {cpu:.1f} s CPU; "
          f"best {best[0][0] if best else None} samples/s -> {a.out}")


if __name__ == "__main__":
    main()

"""python3 -m devplace_export --torchvision NAME | --module pkg.mod:factory --batch-size N
                              [--input-shape C H W] [--device cpu|cuda] [--estimate h100|a100|v100]
                              [--capture auto|export|fx] --out G.json"""
import argparse
import importlib
import os
import shutil
import subprocess
import sys
import time

EXIT_USAGE, EXIT_FAIL = 2, 1


def _parser():
    p = argparse.ArgumentParser(prog="python3 -m devplace_export",
                                description="Export and profile a PyTorch model as a devplace.graph/1 file.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--torchvision", metavar="NAME", help="a torchvision model, built with weights=None (e.g. resnet18)")
    src.add_argument("--module", metavar="PKG.MOD:FACTORY",
                     help="a callable returning a torch.nn.Module; if the module has example_inputs(batch_size), "
                          "that gives the inputs, else --input-shape does")
    p.add_argument("--input-shape", type=int, nargs="+", metavar="D",
                   help="shape of one sample, without the batch dimension [3 224 224 for --torchvision]")
    p.add_argument("--batch-size", type=int, required=True, metavar="N", help="micro-batch size")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:i] [cpu]")
    p.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    p.add_argument("--estimate", choices=["h100", "a100", "v100"],
                   help="do not time; estimate each operator from FLOPs and bytes on this device")
    p.add_argument("--capture", default="auto", choices=["auto", "export", "fx"],
                   help="auto: torch.export where the installed torch has it, else torch.fx [auto]")
    p.add_argument("--leaf", action="append", default=[], metavar="PKG.MOD:CLASS",
                   help="(fx) keep modules of this class as one operator; repeatable")
    p.add_argument("--reps", type=int, default=5, help="timed steps; per-operator medians [5]")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps first [2]")
    p.add_argument("--threads", type=int, help="torch.set_num_threads (CPU)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--name", help="graph name [MODEL_mbsN]")
    p.add_argument("--out", required=True, help="output file (devplace.graph/1)")
    return p


def _load(spec, what):
    mod, sep, attr = spec.partition(":")
    if not sep or not mod or not attr:
        raise SystemExit(f"devplace_export: {what} {spec!r}: expected pkg.module:name")
    try:
        return getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as e:
        raise SystemExit(f"devplace_export: {what} {spec!r}: {e}")


def _imports_torch(python, env):
    try:
        return subprocess.run([python, "-c", "import torch"], env=env, capture_output=True, timeout=300).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _run_elsewhere(argv, error):
    """torch is not importable here (a virtual environment's python3 on PATH, say, while Debian's
    python3-torch belongs to /usr/bin/python3): run again with the first of python3 on PATH and
    /usr/bin/python3 that imports torch, saying so in one line; else say in one line which
    interpreter to use. Never a traceback."""
    here = os.path.abspath(sys.executable)
    env = dict(os.environ)
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = package_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    if not env.get("DEVPLACE_EXPORT_RERUN"):
        tried = set()
        for python in (shutil.which("python3"), "/usr/bin/python3"):
            if not python or os.path.abspath(python) in tried or os.path.abspath(python) == here:
                continue
            tried.add(os.path.abspath(python))
            if os.path.exists(python) and _imports_torch(python, env):
                print(f"devplace_export: torch is not importable by {here} ({reason}); running with {python}, which has it",
                      file=sys.stderr)
                sys.stderr.flush()
                env["DEVPLACE_EXPORT_RERUN"] = "1"
                os.execve(python, [python, "-m", "devplace_export", *argv], env)
    print(f"devplace_export: torch is not importable by {here} ({reason}), nor by python3 on PATH or /usr/bin/python3: "
          f"run with an interpreter that has torch (Debian: apt-get install python3-torch python3-torchvision, "
          f"then /usr/bin/python3 -m devplace_export)", file=sys.stderr)
    return EXIT_FAIL


def main(argv=None):
    a = _parser().parse_args(argv)
    if a.batch_size < 1 or a.reps < 1 or a.warmup < 0:
        print("devplace_export: --batch-size and --reps must be >= 1, --warmup >= 0", file=sys.stderr)
        return EXIT_USAGE
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install failing as it loads
        return _run_elsewhere(sys.argv[1:] if argv is None else list(argv), e)
    from . import CaptureError, export_model, write_graph

    torch.manual_seed(a.seed)
    if a.threads:
        torch.set_num_threads(a.threads)
    if a.torchvision:
        try:
            import torchvision.models as tvm
        except ImportError:
            print("devplace_export: torchvision is not importable", file=sys.stderr)
            return EXIT_FAIL
        if not hasattr(tvm, a.torchvision):
            print(f"devplace_export: --torchvision {a.torchvision}: no such model in torchvision {tvm.__name__}",
                  file=sys.stderr)
            return EXIT_USAGE
        model = getattr(tvm, a.torchvision)(weights=None)
        label = f"torchvision {a.torchvision}"
        short = a.torchvision
        if a.torchvision.startswith("inception") and not a.input_shape:
            a.input_shape = [3, 299, 299]
    else:
        model = _load(a.module, "--module")()
        label = a.module
        short = a.module.split(":")[-1]
    if hasattr(model, "example_inputs") and not a.input_shape:
        inputs = tuple(model.example_inputs(a.batch_size))
    else:
        shape = a.input_shape or ([3, 224, 224] if a.torchvision else None)
        if not shape:
            print("devplace_export: --input-shape is needed (the module has no example_inputs(batch_size))",
                  file=sys.stderr)
            return EXIT_USAGE
        inputs = (torch.randn(a.batch_size, *shape),)
    leaves = tuple(_load(s, "--leaf") for s in a.leaf)
    name = a.name or f"{short}_mbs{a.batch_size}"
    t0 = time.time()
    try:
        doc = export_model(model, inputs, name=name, model_label=label, micro_batch=a.batch_size,
                           device=a.device, dtype=getattr(torch, a.dtype), estimate_on=a.estimate,
                           capture_method=a.capture, reps=a.reps, warmup=a.warmup, leaf_modules=leaves,
                           log=lambda s: print(s, file=sys.stderr))
        write_graph(doc, a.out)
    except CaptureError as e:
        print(f"devplace_export: {label}: {e}", file=sys.stderr)
        return EXIT_FAIL
    except OSError as e:
        print(f"devplace_export: {a.out}: {e.strerror or e}", file=sys.stderr)
        return EXIT_FAIL
    s = doc["source"]
    print(f"graph           {doc['name']}")
    print(f"operators       {len(doc['nodes'])}")
    print(f"edges           {len(doc['edges'])}")
    print(f"capture         {s['capture']}")
    print(f"timing          {s['timing'].split(';')[0]}")
    print(f"operator sum    {s['op_sum_ms']:.3f} ms (fwd+bwd)")
    if "step_ratio" in s:
        print(f"measured step   {s['step_ms']:.3f} ms profiled, {s['unprofiled_step_ms']:.3f} ms without profiler")
        print(f"step_ratio      {s['step_ratio']:.3f} (operator sum / step, median over steps; "
              f"{s['strict_ratio']:.3f} inside operator ranges only)")
    print(f"written         {a.out} ({time.time() - t0:.1f} s)")
    if "step_ratio" in s:
        if abs(s["step_ratio"] - 1) > 0.10:
            print(f"devplace_export: warning: the operators account for {100 * s['step_ratio']:.0f}% of the measured "
                  f"step (more than 10% off): see source.unattributed_bwd_ms", file=sys.stderr)
        if s["step_ms"] > 1.25 * s["unprofiled_step_ms"]:
            print(f"devplace_export: warning: profiling slows the step {s['step_ms'] / s['unprofiled_step_ms']:.1f}x "
                  f"({s['unprofiled_step_ms']:.3f} ms without it): operators this short are dominated by the "
                  f"profiler's own overhead, and their times are inflated", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

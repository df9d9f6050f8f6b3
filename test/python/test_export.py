"""End-to-end tests of python -m devplace_export (CPU, Debian's python3-torch): the graph file
is a valid devplace.graph/1 (devplace info accepts it) and the per-operator times add up to the
measured step within 15 %."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYDIR = os.path.join(ROOT, "python")
CLI = os.environ.get("DEVPLACE_CLI")
TOLERANCE = 0.15


def export(*args):
    env = dict(os.environ, PYTHONPATH=PYDIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "devplace_export", *args], env=env,
                          capture_output=True, text=True, timeout=600)


class Exported(unittest.TestCase):
    def run_export(self, *args):
        out = os.path.join(self.tmp.name, "g.json")
        p = export(*args, "--out", out)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(out) as f:
            return out, json.load(f), p.stdout

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def check_graph(self, path, doc):
        self.assertEqual(doc["format"], "devplace.graph/1")
        ids = {n["id"] for n in doc["nodes"]}
        self.assertEqual(len(ids), len(doc["nodes"]))
        for n in doc["nodes"]:
            for k in ("fwd_ms", "bwd_ms", "fwd_mem_bytes", "bwd_mem_bytes", "param_bytes", "out_bytes"):
                self.assertGreaterEqual(n[k], 0, (n["name"], k))
        for e in doc["edges"]:
            self.assertIn(e["src"], ids)
            self.assertIn(e["dst"], ids)
            self.assertLess(e["src"], e["dst"])  # ids follow the graph's (topological) order
        s = doc["source"]
        for k in ("model", "micro_batch_size", "device", "dtype", "capture", "timing", "op_sum_ms"):
            self.assertIn(k, s)
        self.assertAlmostEqual(s["op_sum_ms"], sum(n["fwd_ms"] + n["bwd_ms"] for n in doc["nodes"]), delta=1e-3)
        if CLI:
            p = subprocess.run([CLI, "info", "--graph", path], capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertRegex(p.stdout, rf"operators\s+{len(doc['nodes'])}\n")
            self.assertRegex(p.stdout, rf"edges\s+{len(doc['edges'])}\n")

    def check_ratio(self, doc):
        s = doc["source"]
        print(f"\n{doc['name']}: step_ratio {s['step_ratio']} (operator sum {s['op_sum_ms']:.2f} ms, "
              f"profiled step {s['step_ms']:.2f} ms, sum/step {s['op_sum_ms'] / s['step_ms']:.4f}, strict_ratio {s['strict_ratio']}, unprofiled step {s['unprofiled_step_ms']:.2f} ms)")
        self.assertLessEqual(abs(s["step_ratio"] - 1), TOLERANCE, s)
        self.assertLessEqual(abs(s["op_sum_ms"] / s["step_ms"] - 1), TOLERANCE, s)  # the file's own figures

    def test_resnet18(self):
        import torchvision
        path, doc, _ = self.run_export("--torchvision", "resnet18", "--input-shape", "3", "64", "64",
                                       "--batch-size", "2")
        self.check_graph(path, doc)
        self.check_ratio(doc)
        m = torchvision.models.resnet18(weights=None)
        self.assertEqual(sum(n["param_bytes"] for n in doc["nodes"]), sum(p.numel() * 4 for p in m.parameters()))
        ops = [n["op"] for n in doc["nodes"]]
        self.assertEqual(ops.count("conv2d"), 20)
        self.assertEqual(doc["source"]["micro_batch_size"], 2)
        self.assertEqual(doc["nodes"][0]["out_bytes"], 2 * 64 * 32 * 32 * 4)  # conv1: 2 x 64 x 32 x 32 floats
        self.assertTrue(all(n["bwd_ms"] > 0 for n in doc["nodes"] if n["op"] == "conv2d"))

    def test_tiny_transformer(self):
        path, doc, _ = self.run_export("--module", "devplace_export.models:tiny_transformer", "--batch-size", "2")
        self.check_graph(path, doc)
        self.check_ratio(doc)
        sys.path.insert(0, PYDIR)
        from devplace_export.models import tiny_transformer
        m = tiny_transformer()
        self.assertEqual(sum(n["param_bytes"] for n in doc["nodes"]), sum(p.numel() * 4 for p in m.parameters()))
        self.assertIn("linear", [n["op"] for n in doc["nodes"]])

    def test_estimate(self):
        path, doc, _ = self.run_export("--torchvision", "resnet18", "--input-shape", "3", "64", "64",
                                       "--batch-size", "2", "--estimate", "h100")
        self.check_graph(path, doc)
        s = doc["source"]
        self.assertIn("analytic", s["timing"])
        self.assertNotIn("step_ratio", s)
        self.assertIn("H100", s["device"])
        conv = doc["nodes"][0]
        # conv1: 2 * (2*64*32*32) outputs * 3*7*7 MACs = 38.5 MFLOP at 60 % of 494.7 TF32 TFLOP/s is ~0.13 us,
        # so memory (input + output + weight bytes at 70 % of 3.35 TB/s) and the 5 us overhead decide
        self.assertGreater(conv["fwd_ms"], 0.005)
        self.assertLess(conv["fwd_ms"], 0.01)

    def test_data_dependent_control_flow_names_the_operator(self):
        p = export("--module", "devplace_export.models:data_dependent", "--input-shape", "16",
                   "--batch-size", "2", "--out", os.path.join(self.tmp.name, "never.json"))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertRegex(p.stderr, r"operator 'gt' \(operator\.gt\)")
        self.assertIn("data-dependent control flow", p.stderr)
        self.assertRegex(p.stderr, r"models\.py:\d+ \(if y\.sum\(\) > 0:\)")
        self.assertNotIn("Traceback", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "never.json")))
        # nested, it names the module; kept as one operator (--leaf), it exports
        p = export("--module", "devplace_export.models:gated", "--input-shape", "16", "--batch-size", "2",
                   "--estimate", "v100", "--out", os.path.join(self.tmp.name, "never.json"))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("inside module 'gate'", p.stderr)
        path, doc, _ = self.run_export("--module", "devplace_export.models:gated", "--input-shape", "16",
                                       "--batch-size", "2", "--estimate", "v100",
                                       "--leaf", "devplace_export.models:DataDependent")
        self.assertEqual([n["op"] for n in doc["nodes"]], ["linear", "relu", "datadependent", "linear"])
        self.assertEqual(doc["nodes"][2]["param_bytes"], (16 * 16 + 16) * 4)

    def test_model_to_plan(self):
        """The README's line from a model to a plan: export, describe the cluster, devplace plan."""
        if not CLI:
            self.skipTest("DEVPLACE_CLI is not set")
        path, doc, _ = self.run_export("--module", "devplace_export.models:tiny_transformer", "--batch-size", "4",
                                       "--estimate", "a100")
        topo = os.path.join(self.tmp.name, "t.json")
        p = subprocess.run([CLI, "topology", "--cluster", os.path.join(ROOT, "examples/topologies/cluster_4x_dgx_a100.json"),
                            "--out", topo], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        plan = os.path.join(self.tmp.name, "plan.json")
        p = subprocess.run([CLI, "plan", "--graph", path, "--topology", topo, "--devices", "8", "--micro-batch-size", "4",
                            "--map-timeout", "2", "--out", plan], capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"chosen +S = \d+, R = \d+")
        with open(plan) as f:
            self.assertEqual(len(json.load(f)["stage_of"]), len(doc["nodes"]))

    def test_attribution(self):
        """Backward time lands on the forward operator that created it: the big matmuls' gradients
        on the linears, not on the cheap relu between them; every timed step fully attributed."""
        sys.path.insert(0, PYDIR)
        import torch
        from devplace_export import export_model
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512))
        doc = export_model(m, (torch.randn(64, 512),), name="mlp", reps=3, warmup=1)
        lin0, relu, lin1 = doc["nodes"]
        self.assertEqual([lin0["op"], relu["op"], lin1["op"]], ["linear", "relu", "linear"])
        self.assertGreater(lin0["bwd_ms"], relu["bwd_ms"])
        self.assertGreater(lin1["bwd_ms"], relu["bwd_ms"])
        self.assertGreater(relu["bwd_ms"], 0)
        self.assertEqual(lin0["param_bytes"], (512 * 1024 + 1024) * 4)
        self.assertEqual(doc["edges"], [{"src": 0, "dst": 1, "bytes": 64 * 1024 * 4},
                                        {"src": 1, "dst": 2, "bytes": 64 * 1024 * 4}])
        self.assertEqual(relu["fwd_mem_bytes"], 64 * 1024 * 4)

    def test_bad_usage(self):
        p = export("--torchvision", "no_such_net", "--batch-size", "2", "--out", os.path.join(self.tmp.name, "x.json"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no_such_net", p.stderr)


if __name__ == "__main__":
    unittest.main()

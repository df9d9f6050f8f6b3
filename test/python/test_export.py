"""End-to-end tests of python -m devplace_export (CPU, Debian's python3-torch): the graph file
is a valid devplace.graph/1 (devplace info accepts it) with the model's parameters and shapes.
How well the exported times predict measured steps is checked in test_prediction.py; the
share of the profiled step the operators account for (step_ratio) is only printed here: on the
CPU each operator is given the time since the previous one ended, so it is close to 1 by
construction."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYDIR = os.path.join(ROOT, "python")
CLI = os.environ.get("DEVPLACE_CLI")


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

    def report_ratio(self, doc):
        s = doc["source"]
        print(f"\n{doc['name']}: step_ratio {s['step_ratio']} (operator sum {s['op_sum_ms']:.2f} ms, "
              f"profiled step {s['step_ms']:.2f} ms, sum/step {s['op_sum_ms'] / s['step_ms']:.4f}, strict_ratio {s['strict_ratio']}, unprofiled step {s['unprofiled_step_ms']:.2f} ms)")
        self.assertGreater(s["step_ms"], 0)
        self.assertGreater(s["unprofiled_step_ms"], 0)

    def test_resnet18(self):
        import torchvision
        path, doc, _ = self.run_export("--torchvision", "resnet18", "--input-shape", "3", "64", "64",
                                       "--batch-size", "2")
        self.check_graph(path, doc)
        self.report_ratio(doc)
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
        self.report_ratio(doc)
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

    def fake_torch(self):
        """A python3 (a link to this interpreter under another name) that cannot import torch, first
        on PATH, as a virtual environment's would be: a `torch` package ahead on PYTHONPATH refuses
        the interpreter named in DEVPLACE_TEST_NO_TORCH ("*": every one) and hands the others the
        real torch."""
        bindir, fake = os.path.join(self.tmp.name, "bin"), os.path.join(self.tmp.name, "fake")
        os.makedirs(bindir)
        os.makedirs(os.path.join(fake, "torch"))
        bad = os.path.join(bindir, "python3")
        os.symlink(sys.executable, bad)
        with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
            f.write("import importlib, os, sys\n"
                    "if os.environ.get('DEVPLACE_TEST_NO_TORCH') in ('*', sys.executable):\n"
                    "    raise ImportError('no torch for ' + sys.executable)\n"
                    f"sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != {fake!r}]\n"
                    "del sys.modules['torch']\n"
                    "sys.modules['torch'] = importlib.import_module('torch')\n")
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
                   PYTHONPATH=fake + os.pathsep + PYDIR, DEVPLACE_TEST_NO_TORCH=bad)
        env.pop("DEVPLACE_EXPORT_RERUN", None)
        return bad, env

    def test_interpreter_without_torch_reruns_with_one_that_has_it(self):
        if not os.path.exists("/usr/bin/python3"):
            self.skipTest("no /usr/bin/python3")
        bad, env = self.fake_torch()
        if subprocess.run(["/usr/bin/python3", "-c", "import torch"], env=env, capture_output=True).returncode != 0:
            self.skipTest("/usr/bin/python3 does not import torch")
        # A usage error found once torch is loaded: the rerun gets that far, and says so.
        p = subprocess.run([bad, "-m", "devplace_export", "--torchvision", "no_such_net", "--batch-size", "2", "--out",
                            os.path.join(self.tmp.name, "x.json")], env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"torch is not importable by {bad}", p.stderr)
        self.assertIn("running with /usr/bin/python3, which has it", p.stderr)
        self.assertIn("no_such_net", p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_no_interpreter_with_torch_is_one_line(self):
        bad, env = self.fake_torch()
        env["DEVPLACE_TEST_NO_TORCH"] = "*"
        p = subprocess.run([bad, "-m", "devplace_export", "--torchvision", "resnet18", "--batch-size", "2", "--out",
                            os.path.join(self.tmp.name, "x.json")], env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("/usr/bin/python3 -m devplace_export", p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_bad_usage(self):
        p = export("--torchvision", "no_such_net", "--batch-size", "2", "--out", os.path.join(self.tmp.name, "x.json"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no_such_net", p.stderr)


if __name__ == "__main__":
    unittest.main()

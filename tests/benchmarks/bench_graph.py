"""Benchmark of the model's graph (issue 48), side by side with TensorFlow's `import_meta_graph` of the same
file, each a whole process where the goal names one:

1. a TF1 training graph of ~30,000 nodes (400 variable-scoped dense layers, Adam, a Saver: written by
   TensorFlow, tests/graph_scale_fixtures.py) opened to its top level: read, grouped, the root laid out and
   placed, in a fresh process with igraph not yet imported (the cost after a click; goal under 1 s);
2. every group of up to 2,000 children opened: its layout (igraph's Sugiyama, then placing), the slowest and
   the median printed (goal under 0.3 s each);
3. `main.py graph META --dot OUT` as a whole process against `import_meta_graph` as a whole process (goal: at
   most half its time), with the peak memory of each; the DOT read back by Graphviz equals TensorFlow's graph;
4. the window's frame time while panning and zooming with 5,000 items visible (offscreen Qt, software
   raster; goal 60 frames a second, 16.7 ms);
5. a graph of a million nodes: its top level opened in a fresh process, time and peak memory (bounded).

Run by hand from the repository root; it asserts nothing about timings:

    .venv/bin/python tests/benchmarks/bench_graph.py [--reps 3] [--skip-frames] [--skip-million]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "tests" / "benchmarks" / ".cache" / "graph"
sys.path.insert(0, str(ROOT))

WRITE = """\
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.graph_scale_fixtures import write_dense_training_meta, write_million_node_graph_def
print(write_dense_training_meta(Path(sys.argv[2])) if sys.argv[3] == "dense" else
      write_million_node_graph_def(Path(sys.argv[2])))
"""

# A fresh process: the time from the click (the graph file named) to the top level placed.
OPEN_TOP_LEVEL = """\
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from checkpoint_inspector.core.run.run_graph import model_graph_of
from checkpoint_inspector.core.analysis.graph.hierarchy import ROOT, GraphTree
from checkpoint_inspector.core.analysis.graph.layout import GraphLayout
start = time.perf_counter()
graph = model_graph_of(sys.argv[2])
read = time.perf_counter()
tree = GraphTree(graph)
grouped = time.perf_counter()
placement = GraphLayout(tree).place(set())
done = time.perf_counter()
print(json.dumps({"read": read - start, "grouped": grouped - read, "laid_out": done - grouped, "total": done - start,
                  "nodes": len(graph.nodes), "top_items": len(placement.boxes),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

TF_IMPORT = """\
import sys, time
import tensorflow as tf
with tf.Graph().as_default() as graph:
    tf.compat.v1.train.import_meta_graph(sys.argv[1])
print(len(graph.get_operations()))
"""


def child(code: str, *args: str) -> str:
    """What `python -c code args` printed (a child: this process never imports TensorFlow)."""
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT)
    if result.returncode:
        raise SystemExit(f"child failed: {result.stderr[-2000:]}")
    return result.stdout


def whole_process(argv: list[str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    if result.returncode:
        raise SystemExit(f"{' '.join(argv)} failed: {result.stderr[-2000:]}")
    return time.perf_counter() - start


def peak_of(argv: list[str]) -> float:
    """Peak RSS (MB) of one run of argv, measured by a wrapper child of its own."""
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, capture_output=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)")
    return float(subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                                check=True, cwd=ROOT).stdout)


def graph_file(kind: str) -> Path:
    path = CACHE / ("dense_400.meta" if kind == "dense" else "million.meta")
    if not path.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        print(f"writing {path.name} ...", flush=True)
        child(WRITE, str(ROOT), str(path), kind)
    return path


def top_level(path: Path, reps: int) -> None:
    runs = [json.loads(child(OPEN_TOP_LEVEL, str(ROOT), str(path))) for _ in range(reps)]
    best = min(runs, key=lambda r: r["total"])
    print(f"  top level of {best['nodes']:,} nodes in a fresh process: {best['total']:.3f} s "
          f"(read {best['read']:.3f}, grouped {best['grouped']:.3f}, laid out with igraph's import "
          f"{best['laid_out']:.3f}); {best['top_items']} items; peak {best['peak_mb']:.0f} MB; "
          f"median of {reps}: {statistics.median(r['total'] for r in runs):.3f} s")


def group_layouts(path: Path) -> None:
    from checkpoint_inspector.core.analysis.graph.hierarchy import GraphTree
    from checkpoint_inspector.core.analysis.graph.layout import GraphLayout
    from checkpoint_inspector.core.run.run_graph import model_graph_of

    tree = GraphTree(model_graph_of(str(path)))
    layout = GraphLayout(tree)
    layout.place(set())  # igraph imported, the root arranged
    groups = [item.id for item in tree.items.values() if item.expandable and 1 < len(tree.children(item.id)) <= 2000]
    times = []
    for group in groups:
        opened = set(tree.ancestors(group)) | {group}
        start = time.perf_counter()
        layout.place(opened)
        times.append((time.perf_counter() - start, len(tree.children(group)), group))
    times.sort()
    slowest = times[-1]
    widest = max(times, key=lambda t: t[1])
    print(f"  the widest group, {widest[2]} ({widest[1]:,} children): {widest[0] * 1000:.1f} ms")
    print(f"  {len(times)} groups of 2 to 2,000 children opened (each with its holders): median "
          f"{statistics.median(t for t, _, _ in times) * 1000:.1f} ms, slowest {slowest[0] * 1000:.1f} ms "
          f"({slowest[2]}, {slowest[1]:,} children)")


def widest_group(children: int = 2000) -> None:
    """A group of `children` ops, each reading two or three earlier ones (seeded): the layout's worst width."""
    import random

    from checkpoint_inspector.core.analysis.graph.hierarchy import GraphTree
    from checkpoint_inspector.core.analysis.graph.layout import GraphLayout
    from checkpoint_inspector.core.format.graph.model import GraphNode, ModelGraph

    rng = random.Random(48)
    nodes = [GraphNode("block/op_in", "Placeholder")]
    for index in range(1, children):
        sources = {rng.randrange(max(0, index - 50), index) for _ in range(rng.choice((2, 3)))}
        nodes.append(GraphNode(f"block/{rng.choice(('MatMul', 'Add', 'Relu', 'Mul'))}_{index}_", "Op",
                               tuple((nodes[s].name, 0) for s in sorted(sources))))
    tree = GraphTree(ModelGraph("synthetic", "meta", nodes))
    times = []
    for _ in range(5):  # a fresh layout each time: igraph arranges the group again
        layout = GraphLayout(tree)
        layout.place(set())
        start = time.perf_counter()
        placement = layout.place({"block/"})
        times.append(time.perf_counter() - start)
    print(f"  a group of {len(tree.children('block/')):,} children with {len(placement.edges):,} edges among them "
          f"(synthetic, seeded): laid out and placed in {statistics.median(times) * 1000:.0f} ms (median of 5; "
          f"slowest {max(times) * 1000:.0f} ms)")


def dot_against_tensorflow(path: Path, reps: int) -> None:
    out = CACHE / "dense_400.dot"
    ours = [whole_process([sys.executable, "main.py", "graph", str(path), "--dot", str(out)]) for _ in range(reps)]
    theirs = [whole_process([sys.executable, "-c", TF_IMPORT, str(path)]) for _ in range(reps)]
    ours_peak = peak_of([sys.executable, "main.py", "graph", str(path), "--dot", str(out)])
    theirs_peak = peak_of([sys.executable, "-c", TF_IMPORT, str(path)])
    print(f"  graph --dot, whole process: {min(ours):.2f} s (peak {ours_peak:.0f} MB); TensorFlow's "
          f"import_meta_graph, whole process: {min(theirs):.2f} s (peak {theirs_peak:.0f} MB); ratio "
          f"{min(ours) / min(theirs):.2f} (best of {reps} each)")
    sys.path.insert(0, str(ROOT))
    from tests.cli.test_graph_drawing import graphviz_edges, tensorflow_edges

    equal = graphviz_edges(out) == tensorflow_edges(path)
    print(f"  the DOT read back by Graphviz equals TensorFlow's imported graph node for node, edge for edge: {equal}")


def frames(path: Path) -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1]);"
            "from checkpoint_inspector.gui.graph.frame_timing import benchmark_frames; benchmark_frames(sys.argv[2])")
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    result = subprocess.run([sys.executable, "-c", code, str(ROOT), str(path)], capture_output=True, text=True,
                            cwd=ROOT, env=env)
    lines = result.stdout.strip().splitlines() or [f"frame timing failed: {result.stderr.strip()[-800:]}"]
    print("\n".join("  " + line for line in lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--skip-frames", action="store_true")
    parser.add_argument("--skip-million", action="store_true")
    args = parser.parse_args()
    dense = graph_file("dense")
    print(f"{dense} ({dense.stat().st_size / 1e6:.1f} MB)")
    top_level(dense, args.reps)
    group_layouts(dense)
    widest_group()
    dot_against_tensorflow(dense, args.reps)
    if not args.skip_frames:
        frames(dense)
    if not args.skip_million:
        million = graph_file("million")
        print(f"{million} ({million.stat().st_size / 1e6:.1f} MB)")
        top_level(million, 1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes tests/workloads/adversarial/: workloads written to break graph
attribution and CPU linkage, not to flatter them (issue 9).

  scripts/adversarial-workloads.py [OUT_DIR]     (default tests/workloads/adversarial)

Deterministic: every workload has its own fixed seed, so the files only
change when this script does. Re-run it and commit the output together.

Two sets:
- `NN-*.json` use the workload format of specs/sim-rocm-model.md: top-level
  `submission_model` and `rocm`, `shared_execs`, `memset` nodes and ops,
  `sleep` ops, `grid`/`block` on kernels. A simulator older than that spec
  rejects them (unknown field).
- `today-NN-*.json` use only what today's simulator parses, so validate
  can be exercised end to end before the rocm model lands.

Coverage (see the `what` line of each workload, printed as it is written):
random DAGs with copy and memset nodes; 1 to 32 threads; 1/2/3/8/16 HW
queues; the same graph instantiated on many threads; one exec launched from
several threads; eager kernels and blit kernels (device-to-device and small
copies, memsets) on shared queues; update, failed update, destroy and
re-instantiate under contention; 2 and 4 devices; SDK 1.0 and 1.3; both
submission models; sleeps so threads take turns; queue overflow to ROCr's
async thread; nested CPU markers, named and numbered."""
import json
import os
import random
import sys

DIRS = ["host_to_device", "device_to_host", "device_to_device"]
# Copy sizes on both sides of HIP's 16 KiB blit/SDMA cut.
COPY_BYTES = [1024, 8192, 16384, 65536, 1 << 20]


class Gen:
    """One workload under construction; `spec` False keeps to today's format."""

    def __init__(self, tag, seed, spec):
        self.tag = tag
        self.rng = random.Random(seed)
        self.spec = spec
        self.graphs = []
        self.threads = []
        self.shared = []

    # ---------------------------------------------------------------- graphs
    def kernel_node(self, name):
        node = {"kernel": name}
        if self.spec and self.rng.random() < 0.5:
            node["grid"] = [self.rng.choice([1, 64, 1024, 65536]), self.rng.choice([1, 2]), 1]
            node["block"] = [self.rng.choice([64, 256, 1024]), 1, 1]
        return node

    def dag(self, name, n, copy_frac=0.0, memset_frac=0.0, max_deps=3, shape="random"):
        """Nodes in creation order; each dep names an earlier node."""
        rng = self.rng
        nodes = []
        for i in range(n):
            r = rng.random()
            if i and r < copy_frac:
                node = {"memcpy": {"bytes": rng.choice(COPY_BYTES), "direction": rng.choice(DIRS)}}
            elif i and self.spec and r < copy_frac + memset_frac:
                node = {"memset": {"bytes": rng.choice(COPY_BYTES), "value": rng.randrange(256)}}
            else:
                node = self.kernel_node(f"{name}_n{i:03d}")
            if i == 0:
                deps = []
            elif shape == "chain":
                deps = [i - 1]
            elif shape == "fan":
                # root -> wide level -> join: many segments at one level.
                deps = [0] if i < n - 1 else list(range(1, n - 1))
            else:
                deps = sorted(rng.sample(range(i), k=min(i, rng.randint(0, max_deps)))) or ([rng.randrange(i)] if rng.random() < 0.8 else [])
            if deps:
                node["deps"] = deps
            nodes.append(node)
        self.graphs.append({"name": name, "nodes": nodes})
        return name

    def same_shape(self, graph, name):
        """Same node kinds and deps, other kernels: a valid update target."""
        src = next(g for g in self.graphs if g["name"] == graph)
        nodes = []
        for i, node in enumerate(src["nodes"]):
            copy = json.loads(json.dumps(node))
            if "kernel" in copy:
                copy["kernel"] = f"{name}_n{i:03d}"
            nodes.append(copy)
        self.graphs.append({"name": name, "nodes": nodes})
        return name

    def other_shape(self, graph, name):
        """One node more: an update to it fails (topology changed)."""
        src = next(g for g in self.graphs if g["name"] == graph)
        nodes = json.loads(json.dumps(src["nodes"]))
        for i, node in enumerate(nodes):
            if "kernel" in node:
                node["kernel"] = f"{name}_n{i:03d}"
        nodes.append({"kernel": f"{name}_extra", "deps": [len(nodes) - 1]})
        self.graphs.append({"name": name, "nodes": nodes})
        return name

    # --------------------------------------------------------------- threads
    def thread(self, name):
        t = Thread(self, name)
        self.threads.append(t)
        return t

    def shared_exec(self, name, graph, device=0):
        assert self.spec
        self.shared.append({"name": name, "graph": graph, "device": device})
        return name

    def workload(self, sdk="1.3.0", hw_queues=4, devices=1, model=None, rocm=None, durations=None):
        w = {"sdk_version": sdk, "devices": devices, "hw_queues_per_device": hw_queues}
        if durations:
            w["durations"] = durations
        if self.spec:
            if model:
                w["submission_model"] = model
            if rocm:
                w["rocm"] = rocm
            if self.shared:
                w["shared_execs"] = self.shared
        elif model or rocm or self.shared:
            raise ValueError(f"{self.tag}: today's format has no submission_model/rocm/shared_execs")
        w["graphs"] = self.graphs
        w["threads"] = [t.done() for t in self.threads]
        check(w, self.tag)
        return w


class Thread:
    def __init__(self, gen, name):
        self.gen = gen
        self.index = len(gen.threads)
        self.name = name
        self.ops = []
        self.depth = 0
        self.markers = 0

    def op(self, kind, **fields):
        self.ops.append({kind: fields})
        return self

    def stream(self, name, device=0):
        return self.op("create_stream", name=name, device=device)

    def instantiate(self, graph, exec_name, device=0):
        return self.op("instantiate", graph=graph, **{"as": exec_name}, device=device)

    def launch(self, exec_name, stream, times=1):
        return self.op("launch", exec=exec_name, stream=stream, times=times)

    def kernel(self, name, stream, times=1):
        fields = {"name": name, "stream": stream, "times": times}
        if self.gen.spec and self.gen.rng.random() < 0.5:
            fields["grid"] = [self.gen.rng.choice([1, 32, 4096]), 1, 1]
            fields["block"] = [self.gen.rng.choice([64, 256]), 1, 1]
        return self.op("kernel", **fields)

    def memcpy(self, stream, bytes_, direction, times=1):
        return self.op("memcpy", bytes=bytes_, direction=direction, stream=stream, times=times)

    def memset(self, stream, bytes_, times=1, value=0):
        assert self.gen.spec
        return self.op("memset", bytes=bytes_, value=value, stream=stream, times=times)

    def sleep(self, us):
        assert self.gen.spec
        return self.op("sleep", us=us)

    def push(self, name=None):
        """A CPU op: numbered or named, nested as deep as the caller goes."""
        self.markers += 1
        self.depth += 1
        if name is None:
            name = (str(10_000 * (1 + self.index) + self.markers)
                    if self.gen.rng.random() < 0.5 else f"{self.gen.tag}.{self.name}.op{self.markers}")
        return self.op("push_marker", name=name)

    def pop(self):
        assert self.depth > 0
        self.depth -= 1
        return self.op("pop_marker")

    def done(self):
        while self.depth:
            self.pop()
        return {"name": self.name, "ops": self.ops}


def check(w, tag):
    """What the simulator's parser checks, so a bad file fails here, naming it."""
    names = {g["name"] for g in w["graphs"]}
    assert len(names) == len(w["graphs"]), tag
    for g in w["graphs"]:
        for i, n in enumerate(g["nodes"]):
            assert sum(k in n for k in ("kernel", "memcpy", "memset")) == 1, (tag, g["name"], i)
            assert all(d < i for d in n.get("deps", [])), (tag, g["name"], i)
    shared = {e["name"] for e in w.get("shared_execs", [])}
    for e in w.get("shared_execs", []):
        assert e["graph"] in names, tag
    for t in w["threads"]:
        streams, execs, depth = set(), set(), 0
        for op in t["ops"]:
            (kind, f), = op.items()
            if kind == "create_stream":
                assert f["device"] < w["devices"] and f["name"] not in streams, tag
                streams.add(f["name"])
            elif kind == "instantiate":
                assert f["graph"] in names and f["as"] not in execs, tag
                execs.add(f["as"])
            elif kind == "launch":
                assert f["exec"] in execs or f["exec"] in shared, (tag, f)
                assert f["stream"] in streams, (tag, f)
            elif kind == "update":
                assert f["exec"] in execs and f["graph"] in names, (tag, f)
            elif kind == "destroy":
                assert f["exec"] in execs, (tag, f)
                execs.discard(f["exec"])
            elif kind in ("kernel", "memcpy", "memset"):
                assert f["stream"] in streams, (tag, f)
            elif kind == "push_marker":
                depth += 1
            elif kind == "pop_marker":
                depth -= 1
                assert depth >= 0, tag
        assert depth == 0, tag


# ------------------------------------------------------------- the workloads
# Each returns (what it is for, workload). `spec` False: today's format.

def random_dags(spec, tag, seed, threads, queues, copy_frac, memset_frac, sdk="1.3.0",
                eager=0.3, markers=0.5, model=None, sizes=(4, 24)):
    g = Gen(tag, seed, spec)
    rng = g.rng
    for t in range(threads):
        graph = g.dag(f"{tag}_t{t}", rng.randint(*sizes), copy_frac, memset_frac)
        th = g.thread(f"t{t}").stream("s").instantiate(graph, "e")
        marked = rng.random() < markers
        for step in range(rng.randint(2, 5)):
            if marked:
                th.push()
            th.launch("e", "s", rng.randint(2, 12))
            if rng.random() < eager:
                th.kernel(f"{tag}_t{t}_eager{step}", "s", rng.randint(1, 3))
            if rng.random() < eager:
                th.memcpy("s", rng.choice(COPY_BYTES), rng.choice(DIRS))
            if spec and rng.random() < eager:
                th.memset("s", rng.choice(COPY_BYTES))
            if marked:
                th.pop()
    return g.workload(sdk=sdk, hw_queues=queues, model=model)


def same_graph_many_threads(spec, tag, seed, threads, queues, sdk="1.3.0"):
    g = Gen(tag, seed, spec)
    graph = g.dag(f"{tag}_g", 6, copy_frac=0.2, memset_frac=0.15 if spec else 0.0)
    for t in range(threads):
        th = g.thread(f"t{t}").stream("s").instantiate(graph, "e")
        th.push(str(1000 + t)).launch("e", "s", 20).pop()
    return g.workload(sdk=sdk, hw_queues=queues)


def shared_exec(tag, seed, threads, queues, sdk="1.3.0", devices=1):
    g = Gen(tag, seed, True)
    rng = g.rng
    graph = g.dag(f"{tag}_g", 8, copy_frac=0.15, memset_frac=0.1)
    for d in range(devices):
        g.shared_exec(f"shared{d}", graph, device=d)
    for t in range(threads):
        d = t % devices
        th = g.thread(f"t{t}").stream("s", device=d)
        # Each thread also has an exec of its own, of the same graph: the
        # local name shadows nothing here, so both are launched.
        th.instantiate(graph, "own", device=d)
        for step in range(3):
            th.push().launch(f"shared{d}", "s", rng.randint(3, 10))
            th.push().launch("own", "s", rng.randint(1, 4)).pop().pop()
    return g.workload(sdk=sdk, hw_queues=queues, devices=devices)


def eager_blits(spec, tag, seed, threads, queues, graphs=True, sdk="1.3.0"):
    """Eager kernels, device-to-device and small copies (blit kernels under
    rocm), memsets and graph launches, on queues the threads share."""
    g = Gen(tag, seed, spec)
    rng = g.rng
    graph = g.dag(f"{tag}_g", 5, copy_frac=0.2) if graphs else None
    for t in range(threads):
        th = g.thread(f"t{t}").stream("s").stream("s2")
        if graph:
            th.instantiate(graph, "e")
        for step in range(4):
            th.push()
            th.kernel(f"{tag}_t{t}_k{step}", rng.choice(["s", "s2"]), rng.randint(1, 6))
            th.push()
            th.memcpy("s", rng.choice([1024, 8192, 16384]), "device_to_device", rng.randint(1, 3))
            th.memcpy("s2", rng.choice([4096, 65536]), rng.choice(DIRS))
            if spec:
                th.memset(rng.choice(["s", "s2"]), rng.choice(COPY_BYTES), rng.randint(1, 3))
            th.pop()
            if graph:
                th.launch("e", rng.choice(["s", "s2"]), rng.randint(1, 5))
            th.pop()
    return g.workload(sdk=sdk, hw_queues=queues)


def exec_churn(spec, tag, seed, threads, queues, sdk="1.3.0"):
    """Update, failed update, destroy and re-instantiate, under contention."""
    g = Gen(tag, seed, spec)
    rng = g.rng
    for t in range(threads):
        base = g.dag(f"{tag}_t{t}a", rng.randint(3, 8), copy_frac=0.2,
                     memset_frac=0.1 if spec else 0.0)
        upd = g.same_shape(base, f"{tag}_t{t}b")
        bad = g.other_shape(base, f"{tag}_t{t}x")
        fresh = g.dag(f"{tag}_t{t}c", rng.randint(3, 8), copy_frac=0.2)
        th = g.thread(f"t{t}").stream("s").instantiate(base, "e")
        th.push().launch("e", "s", rng.randint(3, 8))
        th.op("update", exec="e", graph=upd).launch("e", "s", rng.randint(3, 8))
        th.op("update", exec="e", graph=bad).launch("e", "s", rng.randint(2, 5))
        th.op("update", exec="e", graph=base).launch("e", "s", rng.randint(2, 5)).pop()
        th.op("destroy", exec="e")
        # The freed handle goes to the next instantiate (LIFO).
        th.instantiate(fresh, "f").push().launch("f", "s", rng.randint(3, 8)).pop()
        th.op("destroy", exec="f").instantiate(base, "e2").launch("e2", "s", rng.randint(2, 6))
    return g.workload(sdk=sdk, hw_queues=queues)


def devices_contention(spec, tag, seed, devices, threads, queues, sdk="1.3.0"):
    g = Gen(tag, seed, spec)
    rng = g.rng
    for t in range(threads):
        d = t % devices
        graph = g.dag(f"{tag}_t{t}", rng.randint(4, 12), copy_frac=0.2,
                      memset_frac=0.1 if spec else 0.0)
        th = g.thread(f"t{t}").stream("s", device=d).instantiate(graph, "e", device=d)
        th.push().launch("e", "s", rng.randint(5, 15))
        th.kernel(f"{tag}_t{t}_eager", "s", 2).memcpy("s", 8192, "device_to_device").pop()
    return g.workload(sdk=sdk, hw_queues=queues, devices=devices)


def taking_turns(tag, seed, threads, queues):
    """Threads that sleep between launches take turns on a shared queue."""
    g = Gen(tag, seed, True)
    rng = g.rng
    for t in range(threads):
        graph = g.dag(f"{tag}_t{t}", rng.randint(3, 9), copy_frac=0.2, memset_frac=0.1)
        th = g.thread(f"t{t}").stream("s").instantiate(graph, "e")
        th.sleep(300 * t)
        for step in range(6):
            th.push().launch("e", "s", 1).pop().sleep(rng.choice([500, 1500, 3000]))
    return g.workload(hw_queues=queues)


def overflow(tag, seed, threads, queues):
    """Few slots per HW queue: processing overflows to ROCr's async thread."""
    g = Gen(tag, seed, True)
    for t in range(threads):
        graph = g.dag(f"{tag}_t{t}", 40, shape="chain")
        th = g.thread(f"t{t}").stream("s").instantiate(graph, "e")
        th.push().launch("e", "s", 10).kernel(f"{tag}_t{t}_eager", "s", 20).pop()
    return g.workload(hw_queues=queues, rocm={"hw_queue_slots": 32, "graph_batch_size": 16})


def segments(tag, seed, threads, queues, sdk="1.3.0"):
    """Wide levels (many segments, parallel exec streams) and long chains
    (batches up to graph_batch_size)."""
    g = Gen(tag, seed, True)
    wide = g.dag(f"{tag}_wide", 10, shape="fan")
    long = g.dag(f"{tag}_long", 300, shape="chain")
    mixed = g.dag(f"{tag}_mixed", 30, copy_frac=0.1, memset_frac=0.1, max_deps=4)
    for t in range(threads):
        graph = [wide, long, mixed][t % 3]
        th = g.thread(f"t{t}").stream("s").instantiate(graph, "e")
        th.push().launch("e", "s", 4 if graph == long else 15).pop()
    return g.workload(sdk=sdk, hw_queues=queues, rocm={"graph_streams": 4})


def today_markers_only(tag, seed, threads, queues):
    """No graphs at all: eager kernels and copies inside nested markers."""
    g = Gen(tag, seed, False)
    rng = g.rng
    for t in range(threads):
        th = g.thread(f"t{t}").stream("s")
        for step in range(5):
            th.push().kernel(f"{tag}_t{t}_a{step}", "s", rng.randint(5, 15))
            th.push().memcpy("s", rng.choice([4096, 65536]), rng.choice(DIRS), 2).pop()
            th.kernel(f"{tag}_t{t}_b{step}", "s", rng.randint(1, 5)).pop()
            th.kernel(f"{tag}_t{t}_bare{step}", "s", 3)
    return g.workload(hw_queues=queues)


WORKLOADS = [
    # name, builder
    ("01-random-dags-copies-memsets-q4", lambda t: random_dags(True, t, 101, 6, 4, 0.2, 0.15)),
    ("02-one-thread-branchy-q1", lambda t: random_dags(True, t, 102, 1, 1, 0.25, 0.15, sizes=(20, 40))),
    ("03-32-threads-q16", lambda t: random_dags(True, t, 103, 32, 16, 0.1, 0.1, sizes=(2, 8))),
    ("04-32-threads-q1", lambda t: random_dags(True, t, 104, 32, 1, 0.1, 0.1, sizes=(2, 6))),
    ("05-mixed-sizes-q2", lambda t: random_dags(True, t, 105, 8, 2, 0.15, 0.1, sizes=(2, 30))),
    ("06-mixed-sizes-q3-eager", lambda t: random_dags(True, t, 106, 12, 3, 0.15, 0.1, eager=0.7)),
    ("07-random-q8-sdk10", lambda t: random_dags(True, t, 107, 16, 8, 0.2, 0.1, sdk="1.0.0")),
    ("08-same-graph-12-threads-q4", lambda t: same_graph_many_threads(True, t, 108, 12, 4)),
    ("09-same-graph-8-threads-q1-sdk10", lambda t: same_graph_many_threads(True, t, 109, 8, 1, sdk="1.0.0")),
    ("10-shared-exec-4-threads-q2", lambda t: shared_exec(t, 110, 4, 2)),
    ("11-shared-exec-16-threads-q8", lambda t: shared_exec(t, 111, 16, 8)),
    ("12-shared-exec-2-devices-sdk10", lambda t: shared_exec(t, 112, 6, 3, sdk="1.0.0", devices=2)),
    ("13-eager-blits-shared-queues-q2", lambda t: eager_blits(True, t, 113, 8, 2)),
    ("14-eager-blits-only-q3", lambda t: eager_blits(True, t, 114, 6, 3, graphs=False)),
    ("15-exec-churn-q2", lambda t: exec_churn(True, t, 115, 8, 2)),
    ("16-exec-churn-q16-sdk10", lambda t: exec_churn(True, t, 116, 16, 16, sdk="1.0.0")),
    ("17-two-devices-q2", lambda t: devices_contention(True, t, 117, 2, 8, 2)),
    ("18-four-devices-q3", lambda t: devices_contention(True, t, 118, 4, 12, 3)),
    ("19-taking-turns-q1", lambda t: taking_turns(t, 119, 6, 1)),
    ("20-overflow-async-thread-q2", lambda t: overflow(t, 120, 4, 2)),
    ("21-segments-and-batches-q4", lambda t: segments(t, 121, 9, 4)),
    ("22-segments-sdk10-q2", lambda t: segments(t, 122, 6, 2, sdk="1.0.0")),
    ("23-ideal-in-file-q2", lambda t: random_dags(True, t, 123, 8, 2, 0.2, 0.1, model="ideal")),
    ("24-rocm-in-file-q3", lambda t: random_dags(True, t, 124, 10, 3, 0.2, 0.1, model="rocm")),
    # Today's format: exercisable before the rocm model lands.
    ("today-01-random-dags-copies-q2", lambda t: random_dags(False, t, 201, 6, 2, 0.25, 0.0)),
    ("today-02-same-graph-8-threads-q4", lambda t: same_graph_many_threads(False, t, 202, 8, 4)),
    ("today-03-markers-no-graphs-q2", lambda t: today_markers_only(t, 203, 8, 2)),
    ("today-04-exec-churn-q2", lambda t: exec_churn(False, t, 204, 6, 2)),
    ("today-05-four-devices-q2", lambda t: devices_contention(False, t, 205, 4, 8, 2)),
    ("today-06-mixed-sizes-sdk10-q3", lambda t: random_dags(False, t, 206, 8, 3, 0.1, 0.0, sdk="1.0.0", sizes=(2, 20))),
    ("today-07-32-threads-q16", lambda t: random_dags(False, t, 207, 32, 16, 0.1, 0.0, sizes=(2, 8))),
    ("today-08-eager-copies-q1", lambda t: eager_blits(False, t, 208, 4, 1)),
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "workloads", "adversarial")
    os.makedirs(out, exist_ok=True)
    for name, build in WORKLOADS:
        parts = name.split("-")
        w = build("td" + parts[1] if parts[0] == "today" else "a" + parts[0])
        path = os.path.join(out, f"{name}.json")
        with open(path, "w") as f:
            json.dump(w, f, indent=1)
            f.write("\n")
        ops = sum(len(t["ops"]) for t in w["threads"])
        print(f"{os.path.relpath(path)}: {len(w['threads'])} threads, {len(w['graphs'])} graphs, {ops} ops")


if __name__ == "__main__":
    main()

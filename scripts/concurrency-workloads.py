#!/usr/bin/env python3
"""Writes two variants of the seed's concurrency workload (one exec per
thread, 100 replays, 4 HW queues, one stream per thread) for N in
1,2,3,4,8,16 threads:

  tests/workloads/concurrent-mixed-Nthreads.json   graphs of different sizes
      per thread, so no two threads' launches produce the same number of
      dispatches; every kernel name is unique per (thread, node), as in the
      seed's workload, so a kernel's name alone tells its exec.
  tests/workloads/concurrent-shared-Nthreads.json  the same sizes, but every
      thread's graph is built from the same kernels (as threads replaying
      graphs of one model do): a kernel's name says nothing about its exec
      and only timing and queue evidence can tell launches apart.

Thread i runs root -> (2 + i % 5) independent kernels -> join.

  scripts/concurrency-workloads.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "workloads")


def graph(t, shared):
    width = 2 + t % 5
    prefix = "k" if shared else f"m{t:02d}"
    nodes = [{"kernel": f"{prefix}_root"}]
    nodes += [{"kernel": f"{prefix}_b{b}", "deps": [0]} for b in range(width)]
    nodes.append({"kernel": f"{prefix}_join", "deps": list(range(1, width + 1))})
    return {"name": f"m{t}", "nodes": nodes}


def workload(threads, shared):
    return {
        "sdk_version": "1.3.0",
        "devices": 1,
        "hw_queues_per_device": 4,
        "graphs": [graph(t, shared) for t in range(threads)],
        "threads": [
            {
                "name": f"t{t}",
                "ops": [
                    {"create_stream": {"name": "s"}},
                    {"instantiate": {"graph": f"m{t}", "as": "e"}},
                    {"launch": {"exec": "e", "stream": "s", "times": 100}},
                ],
            }
            for t in range(threads)
        ],
    }


def main():
    for variant, shared in (("mixed", False), ("shared", True)):
        for n in (1, 2, 3, 4, 8, 16):
            path = os.path.join(OUT, f"concurrent-{variant}-{n}threads.json")
            with open(path, "w") as f:
                json.dump(workload(n, shared), f, indent=1)
                f.write("\n")
            print(path)


if __name__ == "__main__":
    main()

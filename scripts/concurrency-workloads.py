#!/usr/bin/env python3
"""Writes tests/workloads/concurrent-mixed-Nthreads.json: the seed's
concurrency workload (one exec per thread, 100 replays, 4 HW queues, one
stream per thread) with graphs of different sizes per thread, so that no
two threads' launches produce the same number of dispatches.

Thread i runs root -> (2 + i % 5) independent kernels -> join; every kernel
name is unique per (thread, node), so a trace can be checked by name alone.

  scripts/concurrency-workloads.py          writes the files for N in 1,2,3,4,8,16
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "workloads")


def graph(t):
    width = 2 + t % 5
    nodes = [{"kernel": f"m{t:02d}_root"}]
    nodes += [{"kernel": f"m{t:02d}_b{b}", "deps": [0]} for b in range(width)]
    nodes.append({"kernel": f"m{t:02d}_join", "deps": list(range(1, width + 1))})
    return {"name": f"m{t}", "nodes": nodes}


def workload(threads):
    return {
        "sdk_version": "1.3.0",
        "devices": 1,
        "hw_queues_per_device": 4,
        "graphs": [graph(t) for t in range(threads)],
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
    for n in (1, 2, 3, 4, 8, 16):
        path = os.path.join(OUT, f"concurrent-mixed-{n}threads.json")
        with open(path, "w") as f:
            json.dump(workload(n), f, indent=1)
            f.write("\n")
        print(path)


if __name__ == "__main__":
    main()

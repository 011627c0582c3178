#!/usr/bin/env python3
"""Item 12's reference: the median time of one warm run of a KCL program
by the real KCL (PyPI's kcl-lib), in-process, after a first run.

usage: kcl_reference.py PROGRAM.k PARAMS_JSON RUNS
prints: the program's JSON result on the first line, then the median in ns
"""
import sys
import time

import kcl_lib.api as api

source = open(sys.argv[1]).read()
params = sys.argv[2]
runs = int(sys.argv[3])
kcl = api.API()
args = api.ExecProgramArgs(
    k_filename_list=["main.k"],
    k_code_list=[source],
    args=[api.Argument(name="params", value=params)],
)
first = kcl.exec_program(args)
if first.err_message:
    sys.exit(f"kcl-lib failed: {first.err_message}")
print(first.json_result.replace("\n", " "))
times = []
for _ in range(runs):
    started = time.perf_counter_ns()
    kcl.exec_program(args)
    times.append(time.perf_counter_ns() - started)
times.sort()
print(times[len(times) // 2])

"""Parsing Nsight Compute's raw CSV page into the Judge's metrics, and the ncu command for a candidate."""

from __future__ import annotations

from cudalens.agents.evaluation import CorrectnessOutcome
from cudalens.agents.judge import JudgeInput, judge
from cudalens.agents.ncu_csv import kernel_names, ncu_command, parse_ncu_csv

# The shape `ncu --csv --page raw --log-file f` writes: tool lines, a header, a units row, one row per launch.
LOG = """==PROF== Connected to process 4242 (/usr/bin/python3.12)
==PROF== Profiling "relu_kernel" - 0: 0%....50%....100% - 9 passes
==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes.sum","gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed","sm__throughput.avg.pct_of_peak_sustained_elapsed","smsp__sass_thread_inst_executed_op_fadd_pred_on.sum","launch__grid_size"
"","","","","","","","","","","","byte","%","%","inst",""
"0","4242","python3.12","127.0.0.1","relu_kernel(const float4 *, float4 *, int)","1","7","(256, 1, 1)","(16384, 1, 1)","0","9.0","134,217,728","91.52","17.30","0","16,384"
"1","4242","python3.12","127.0.0.1","void scale<float>(float *, int)","1","7","(128, 1, 1)","(4, 1, 1)","0","9.0","1,024","3.1","2.5","n/a","4"
"2","4242","python3.12","127.0.0.1","relu_kernel(const float4 *, float4 *, int)","1","7","(256, 1, 1)","(16384, 1, 1)","0","9.0","134,217,728","91.00","17.00","0","16,384"
"""


def test_parse_raw_csv_per_kernel() -> None:
    relu, scale = parse_ncu_csv(LOG)
    assert relu.kernel == "relu_kernel" and scale.kernel == "scale"
    assert relu.get("dram__bytes.sum") == 134217728.0 and relu.get("launch__grid_size") == 16384.0
    assert relu.get("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed") == 91.52
    assert scale.get("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum") is None
    v = judge(JudgeInput("relu_kernel", correctness=CorrectnessOutcome("passed", 5, 5), metrics=relu))
    assert v.status == "measured" and v.bottleneck == "memory"


def test_no_csv_is_no_profiles() -> None:
    assert parse_ncu_csv("==ERROR== Failed to find metric foo\n") == []


def test_command_targets_only_the_files_kernels() -> None:
    src = 'cuda = """\ntemplate <int N> __global__ void scale(float* x) {}\n__global__ void relu_kernel(float* x) {}\n"""'
    assert kernel_names(src) == ["scale", "relu_kernel"]
    cmd = ncu_command("ncu", ("dram__bytes.sum",), kernel_names(src), "/tmp/log.csv")
    assert cmd[cmd.index("--kernel-name") + 1] == r"regex:^(scale|relu_kernel)\b"
    assert "--profile-from-start" in cmd and cmd[cmd.index("--clock-control") + 1] == "none"

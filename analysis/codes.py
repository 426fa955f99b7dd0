"""The one registry of rule codes. A code, once published, is never reused for another rule.

Add a rule: write `analysis/rules/<pattern_name>.py` with one `Rule` subclass and list it here.
"""

from __future__ import annotations

import importlib

from cudalens.analysis.rule_base import Rule, RuleInfo

# code -> "module:Class" under cudalens.analysis.rules, in code order.
REGISTRY: dict[str, str] = {
    "CL001": "file_not_analysed:FileNotAnalysed",
    "CL002": "code_not_analysed:CodeNotAnalysed",
    "CL101": "uncoalesced_global_access:UncoalescedGlobalAccess",
    "CL102": "array_of_structs_field_access:ArrayOfStructsFieldAccess",
    "CL103": "transpose_without_shared_staging:TransposeWithoutSharedStaging",
    "CL104": "data_dependent_global_access:DataDependentGlobalAccess",
    "CL201": "divergent_branch:DivergentBranch",
    "CL202": "divergent_loop_trip_count:DivergentLoopTripCount",
    "CL203": "data_dependent_branch:DataDependentBranch",
    "CL204": "serial_loop_on_one_lane:SerialLoopOnOneLane",
    "CL301": "shared_bank_conflict:SharedBankConflict",
    "CL302": "barrier_in_divergent_code:BarrierInDivergentCode",
    "CL303": "shared_memory_race:SharedMemoryRace",
    "CL401": "block_size_not_warp_multiple:BlockSizeNotWarpMultiple",
    "CL402": "block_size_over_limit:BlockSizeOverLimit",
    "CL403": "static_shared_memory_over_limit:StaticSharedMemoryOverLimit",
    "CL404": "dynamic_shared_memory_without_opt_in:DynamicSharedMemoryWithoutOptIn",
    "CL405": "large_local_array:LargeLocalArray",
    "CL501": "double_precision_literal:DoublePrecisionLiteral",
    "CL502": "double_precision_math_function:DoublePrecisionMathFunction",
    "CL503": "integer_division_in_loop:IntegerDivisionInLoop",
    "CL601": "sync_in_host_loop:SyncInHostLoop",
    "CL602": "unchecked_kernel_launch:UncheckedKernelLaunch",
    "CL701": "single_address_global_atomic:SingleAddressGlobalAtomic",
    "CL801": "compile_error:CompileError",
    "CL802": "compile_warning:CompileWarning",
    "CL803": "register_spills:RegisterSpills",
    "CL804": "low_theoretical_occupancy:LowTheoreticalOccupancy",
    "CL901": "test_failure:TestFailure",
    "CL902": "kernel_crash:KernelCrash",
    "CL903": "slower_than_reference:SlowerThanReference",
    "CL904": "profile_line_hint:ProfileLineHint",
    "CL905": "sanitizer_error:SanitizerError",
    "CL906": "timing_manipulation:TimingManipulation",
    "CL907": "pytorch_fallback:PytorchFallback",
    "CL908": "input_mutation:InputMutation",
    "CL909": "result_not_computed:ResultNotComputed",
    "CL910": "judge_verdict:JudgeVerdict",
    "CL911": "precision_downgrade:PrecisionDowngrade",
}


def rule_class(code: str) -> type[Rule]:
    module, cls = REGISTRY[code].split(":")
    return getattr(importlib.import_module(f"cudalens.analysis.rules.{module}"), cls)


def all_rules() -> list[RuleInfo]:
    return [RuleInfo.of(rule_class(code)) for code in REGISTRY]


def rule_info(code_or_name: str) -> RuleInfo | None:
    key = code_or_name.strip()
    for info in all_rules():
        if key.upper() == info.code or key == info.name:
            return info
    return None


def static_rules() -> list[Rule]:
    return [rule_class(code)() for code in REGISTRY if rule_class(code).source == "static"]

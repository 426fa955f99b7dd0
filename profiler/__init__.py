"""cudalens.profiler"""

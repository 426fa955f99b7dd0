"""cudalens.cli"""

"""cudalens.analysis"""

"""cudalens.agents"""

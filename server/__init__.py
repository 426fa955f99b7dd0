"""cudalens.server"""

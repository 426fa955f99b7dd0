"""`cudalens report`: one self-contained HTML page of a run or a file (data.py reads, charts.py draws, page.py
writes)."""

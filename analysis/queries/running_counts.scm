; Host-side scans that fill a buffer with a running count (an inclusive or exclusive prefix sum): CUB's
; DeviceScan, thrust's and the standard library's scans, torch's cumsum. Read by analysis/running_counts.py.
(call_expression
  function: [(identifier) (qualified_identifier) (field_expression)] @scan.name
  (#match? @scan.name "(InclusiveSum|ExclusiveSum|InclusiveScan|ExclusiveScan|inclusive_scan|exclusive_scan|cumsum)$")) @scan

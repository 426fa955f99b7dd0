"""The optimize search: the tree of candidates, the policies that choose what to expand, and the device leases
that evaluations run under."""

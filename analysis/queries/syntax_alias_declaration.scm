; `using Ktraits = Traits<kNThreads, float>;` in a host function: a local name for a type.
(alias_declaration) @alias_declaration

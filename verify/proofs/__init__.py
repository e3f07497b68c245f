"""Z3 proof obligations: one obligation run three-valued with its timing and minimized
counterexample (obligation), the update sites' thread-group signatures (signature), the
butterfly partitions of the participants (partition), the fast path's obligations per
partition (fast_obligations) and the search for the cheapest legal one (fast), the
canonical plan's facts about a loop layout (layout), and the laws of a user-declared
reducer op (monoid). A Z3 `unknown` is never a pass."""

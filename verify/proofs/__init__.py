"""Z3 proof obligations: one obligation run three-valued with its timing and minimized
counterexample (obligation), the update sites' thread-group signatures (signature), the
fast path's legality and width search (fast), the canonical plan's facts about a loop
layout (layout), and the laws of a user-declared reducer op (monoid). A Z3 `unknown` is
never a pass."""

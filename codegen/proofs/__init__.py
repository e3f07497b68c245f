"""The Z3 obligations the planner chooses by: one obligation run three-valued with its
timing and minimized counterexample (obligation), the update sites' thread-group
signatures (signature), the butterfly partitions of the participants (partition), the
fast path's obligations per partition (fast_obligations) and the search for the cheapest
legal one (fast), and the canonical plan's facts about a loop layout (layout). They sit
below the planner (codegen.plan_fast), which records what they decided in the plan it
makes (spec.physical.ChosenBy); the reports read that record. A Z3 `unknown` is never a
pass."""

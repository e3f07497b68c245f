"""The verifier's own Z3 proofs: the laws of a user-declared reducer op (monoid), run
with codegen.proofs.obligation. The obligations a plan is chosen by live below the
planner, in codegen.proofs, and the plan records them (spec.physical.ChosenBy). A Z3
`unknown` is never a pass."""

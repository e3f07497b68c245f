"""The thread-level lowering: every per-thread decision of a generated kernel, made once.

`codegen.plan` decides what each thread owns (layouts, reducer plans, barriers);
this package decides what each thread does with it, statement by statement: the cells
it visits, the elements a copy moves and with which accesses, a pipeline's cp.async
schedule, the atomic contributions it issues. Each module is one concern and states
its contract. What a module decides is plain data (spec.indexexpr expressions for
anything that varies per thread): the simulator (interp.simulate) executes it, the CUDA
renderer (codegen.cuda) prints it, and neither decides any of it again — so the
simulator checks exactly what the GPU runs."""

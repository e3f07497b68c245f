"""verify-reducer as a library: `verify_reducer.oracle` is the public API (load, witness
inputs, the reference with its bounds, compare and check of any backend, the built-in
backends), `verify_reducer.pytest_plugin` the pytest plugin (fixture `reducer_oracle`,
marker `reducer_backend`). See docs/oracle.md."""

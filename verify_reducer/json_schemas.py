"""The JSON Schemas (draft 2020-12) of every `--json` document, shipped with the package
in verify_reducer/schemas/, and a validator that resolves their references offline.

    from verify_reducer.json_schemas import validator
    validator("check").validate(doc)     # jsonschema.ValidationError when doc does not fit

The documents' schemas (check, run, emit, fuzz, compare) refer to what they share in
`defs.schema.json` by relative references (`defs.schema.json#/$defs/diagnostic`), which
resolve against each schema's `$id`, all under one base URI that serves nothing: a
validator must be given every schema, as `registry()` gives them, or a reference stays
unresolvable. `validator` does that; validating needs jsonschema and referencing (the
extra `schemas`: `pip install 'verify-reducer[schemas]'`), reading the schemas does not."""
from __future__ import annotations

import json
from importlib import resources

DOCUMENTS = ("check", "run", "emit", "fuzz", "compare")
NAMES = DOCUMENTS + ("defs",)


def schema(name: str) -> dict:
    """The schema of a document (`check`, ...) or `defs`, as shipped."""
    if name not in NAMES:
        raise ValueError(f"no schema named {name!r}; known: {', '.join(NAMES)}")
    return json.loads((resources.files("verify_reducer") / "schemas" /
                       f"{name}.schema.json").read_text(encoding="utf-8"))


def registry():
    """A referencing.Registry of every shipped schema under its `$id`."""
    import referencing
    return referencing.Registry().with_resources(
        (s["$id"], referencing.Resource.from_contents(s))
        for s in (schema(n) for n in NAMES))


def validator(name: str):
    """A jsonschema validator for a document (`check`, ...) or for one definition
    (`defs.schema.json#/$defs/resources`), every reference resolvable."""
    import jsonschema
    if "#" in name:
        base = schema("defs")["$id"].rsplit("/", 1)[0]
        target = {"$ref": f"{base}/{name}"}
    else:
        target = schema(name)
    return jsonschema.Draft202012Validator(target, registry=registry())

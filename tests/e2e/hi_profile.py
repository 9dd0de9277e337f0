"""hi_profile.py - reads heapinject's JSON profile (docs/JSON.md) for the
end-to-end tests, in the shape of schema version 1: each stack's "frames"
as frame objects and its "pcs" filled in. Version 2 (issue 17) keeps each
distinct frame once in a top-level "frames" table and stacks' "frames" as
indices into it; this resolves them, checking every index, so a test reads
either version the same way (lib.sh puts this directory on PYTHONPATH)."""
import json


def inline(doc):
    """doc with version 2's frame indices replaced by the frames (in place)."""
    if doc.get("version", 1) < 2:
        return doc
    table = doc["frames"]
    assert isinstance(table, list), "version 2 without a \"frames\" table"
    for s in doc.get("stacks", []):
        ids = s["frames"]
        assert all(isinstance(i, int) and 0 <= i < len(table) for i in ids), ids
        s["frames"] = [table[i] for i in ids]
        if "pcs" not in s:  # left out when it is the physical frames' addresses
            fr = s["frames"]
            s["pcs"] = [f["addr"] for k, f in enumerate(fr) if not f.get("inlined") or k + 1 == len(fr)]
    return doc


def load(path):
    with open(path) as f:
        return inline(json.load(f))

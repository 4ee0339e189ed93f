"""Checks a state dump written by rmm_resource_dump_json with a real JSON parser (Python's json):
the schema and version, every node's required fields, and that each chunk's blocks are sorted,
contiguous and cover it exactly, with stream ids that exist. Used by tests/test_diagnostics.c.
Exit 0 if every document in the file is valid, else 1 with the reason on stderr.

usage: python3 tests/check_dump.py DUMP.json [EXPECTED_TOP_TYPE]"""
import json
import sys

TYPES = {"pool", "fixed_size", "binning", "arena", "cuda", "managed", "pinned_host", "async", "async_view", "async_managed", "async_pinned", "logging",
         "statistics", "tracking", "limiting", "failure_callback", "aligned", "thread_safe", "prefetch", "callback", "user"}


def fail(msg):
    print("check_dump: " + msg, file=sys.stderr)
    sys.exit(1)


def check_node(node, path):
    for key in ("type", "name", "address", "upstream"):
        if key not in node:
            fail(f"{path}: no '{key}'")
    if node["type"] not in TYPES:
        fail(f"{path}: unknown type {node['type']!r}")
    ids = set()
    if "streams" in node:
        for s in node["streams"]:
            for key in ("id", "handle", "kind", "alive", "lazy", "free_blocks", "free_bytes"):
                if key not in s:
                    fail(f"{path}.streams: no '{key}'")
            if s["kind"] not in ("legacy", "per_thread", "library", "outlive", "foreign"):
                fail(f"{path}.streams: kind {s['kind']!r}")
            ids.add(s["id"])
    used = 0
    for ci, chunk in enumerate(node.get("chunks", [])):
        at = 0
        for bi, b in enumerate(chunk["blocks"]):
            where = f"{path}.chunks[{ci}].blocks[{bi}]"
            if b["offset"] != at:
                fail(f"{where}: offset {b['offset']}, expected {at} (blocks must be contiguous)")
            if b["size"] <= 0 or b["state"] not in ("used", "free"):
                fail(f"{where}: size {b['size']} state {b['state']!r}")
            if b["state"] == "free" and b["stream"] is not None and node["type"] != "arena" and b["stream"] not in ids:
                fail(f"{where}: stream {b['stream']} is not listed")
            if b["state"] == "used":
                used += b["size"]
            at += b["size"]
        if at != chunk["size"]:
            fail(f"{path}.chunks[{ci}]: blocks cover {at} of {chunk['size']} bytes")
    if node["type"] == "pool" and used != node["counters"]["used_bytes"]:
        fail(f"{path}: {used} bytes in used blocks, counters say {node['counters']['used_bytes']}")
    for i, b in enumerate(node.get("bins", [])):
        if b["resource"] is not None:
            check_node(b["resource"], f"{path}.bins[{i}]")
    if node["upstream"] is not None:
        check_node(node["upstream"], path + ".upstream")


def main():
    if len(sys.argv) < 2:
        fail("usage: check_dump.py DUMP.json [EXPECTED_TOP_TYPE]")
    docs = 0
    with open(sys.argv[1]) as f:
        for line in f:
            if not line.strip():
                continue
            doc = json.loads(line)  # one document per line, as the test writes them
            if doc.get("schema") != "rmm.h resource dump" or doc.get("version") != 1:
                fail(f"schema {doc.get('schema')!r} version {doc.get('version')!r}")
            if len(sys.argv) > 2 and docs == 0 and doc["resource"]["type"] != sys.argv[2]:
                fail(f"top resource is {doc['resource']['type']!r}, expected {sys.argv[2]!r}")
            check_node(doc["resource"], "resource")
            docs += 1
    if docs == 0:
        fail("no document")
    print(f"check_dump: {docs} valid document(s)")


if __name__ == "__main__":
    main()

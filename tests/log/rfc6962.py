#!/usr/bin/env python3
"""An independent check of arbiter's verifiable log (tests/log.rs), written
from RFC 6962 / RFC 9162 section 2.1 with nothing but the standard library.

Reads one JSON object on stdin:

    {"leaves": ["<exported line>", ...],          # every event, in log order
     "roots": [{"size": n, "root": "<b64>"}],      # roots the log claims
     "inclusion": [{"data": "<exported line>", "index": i, "size": n,
                    "root": "<b64>", "path": ["<b64>", ...],
                    "leaf": "<b64>" (optional: the leaf hash arbiter claims)}],
     "consistency": [{"from": m, "to": n, "from_root": "<b64>",
                      "to_root": "<b64>", "path": ["<b64>", ...]}]}

Prints one line per check, "ok <what>" or "REJECTED <what>: <why>", and exits
0 when every check passed, 1 when any was rejected, 2 on malformed input.

Every root is recomputed here from the leaves with MTH (RFC 6962 section
2.1, recursively, from the definition); proofs are checked with the
algorithms of RFC 9162 sections 2.1.3.2 and 2.1.4.2. A leaf's data is one
exported line, without its newline.
"""

import base64
import hashlib
import json
import sys


def sha256(b):
    return hashlib.sha256(b).digest()


def leaf_hash(data):
    return sha256(b"\x00" + data)


def node_hash(left, right):
    return sha256(b"\x01" + left + right)


def largest_power_of_two_below(n):
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(leaves):
    """MTH(D[n]) of RFC 6962 section 2.1, straight from the definition."""
    n = len(leaves)
    if n == 0:
        return sha256(b"")
    if n == 1:
        return leaf_hash(leaves[0])
    k = largest_power_of_two_below(n)
    return node_hash(mth(leaves[:k]), mth(leaves[k:]))


class Rejected(Exception):
    pass


def verify_inclusion(leaf, index, size, path, root):
    """RFC 9162 section 2.1.3.2."""
    # 1. leaf_index must be below tree_size.
    if index >= size:
        raise Rejected("leaf index %d is not below the tree size %d" % (index, size))
    # 2.-3.
    fn, sn, r = index, size - 1, leaf
    # 4.
    for p in path:
        if sn == 0:  # a.
            raise Rejected("the path is longer than the tree is deep")
        if fn & 1 == 1 or fn == sn:  # b.
            r = node_hash(p, r)
            if fn & 1 == 0:
                while not (fn & 1 == 1 or fn == 0):
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1  # c.
        sn >>= 1
    # 5.
    if sn != 0:
        raise Rejected("the path is shorter than the tree is deep")
    if r != root:
        raise Rejected("the path does not lead to the root")


def verify_consistency(first, second, first_hash, second_hash, path):
    """RFC 9162 section 2.1.4.2, for 0 < first < second. The RFC defines no
    proof for first == second or first == 0; as arbiter (and every CT log)
    does, both take an empty proof: equal roots, or the empty tree."""
    if first > second:
        raise Rejected("the first tree (%d) is larger than the second (%d)" % (first, second))
    if first == second:
        if path:
            raise Rejected("a proof between trees of the same size must be empty")
        if first_hash != second_hash:
            raise Rejected("two trees of the same size with different roots")
        return
    if first == 0:
        if path:
            raise Rejected("a proof from the empty tree must be empty")
        if first_hash != sha256(b""):
            raise Rejected("the root of the empty tree is not SHA-256 of nothing")
        return
    # 1.
    if not path:
        raise Rejected("empty consistency path")
    path = list(path)
    # 2.
    if first & (first - 1) == 0:
        path.insert(0, first_hash)
    # 3.
    fn, sn = first - 1, second - 1
    # 4.
    if fn & 1 == 1:
        while fn & 1 == 1:
            fn >>= 1
            sn >>= 1
    # 5.
    fr = sr = path[0]
    # 6.
    for c in path[1:]:
        if sn == 0:  # a.
            raise Rejected("the path is longer than the tree is deep")
        if fn & 1 == 1 or fn == sn:  # b.
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if fn & 1 == 0:
                while not (fn & 1 == 1 or fn == 0):
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1  # c.
        sn >>= 1
    # 7.
    if sn != 0:
        raise Rejected("the path is shorter than the tree is deep")
    if fr != first_hash:
        raise Rejected("the path does not lead to the first root")
    if sr != second_hash:
        raise Rejected("the path does not lead to the second root")


def b64(text):
    raw = base64.b64decode(text, validate=True)
    if len(raw) != 32:
        raise ValueError("%r is not a 32-byte hash" % text)
    return raw


def main():
    doc = json.load(sys.stdin)
    leaves = [line.encode("utf-8") for line in doc.get("leaves", [])]
    for line in leaves:
        if b"\n" in line:
            raise ValueError("a leaf is one line")
    roots = {}

    def own_root(size):
        if size > len(leaves):
            raise Rejected("the tree of size %d is larger than the %d leaves given" % (size, len(leaves)))
        if size not in roots:
            roots[size] = mth(leaves[:size])
        return roots[size]

    failed = 0

    def check(what, f):
        nonlocal failed
        try:
            f()
            print("ok " + what)
        except Rejected as e:
            failed += 1
            print("REJECTED %s: %s" % (what, e))

    for r in doc.get("roots", []):
        size, root = r["size"], b64(r["root"])

        def root_check(size=size, root=root):
            if own_root(size) != root:
                raise Rejected("the root is not MTH of the first %d leaves" % size)

        check("root %d" % size, root_check)

    for c in doc.get("inclusion", []):
        data = c["data"].encode("utf-8")
        index, size, root = c["index"], c["size"], b64(c["root"])
        path = [b64(h) for h in c["path"]]

        def inclusion_check(c=c, data=data, index=index, size=size, root=root, path=path):
            leaf = leaf_hash(data)
            if "leaf" in c and b64(c["leaf"]) != leaf:
                raise Rejected("the claimed leaf hash is not SHA-256(0x00 || line)")
            if own_root(size) != root:
                raise Rejected("the root is not MTH of the first %d leaves" % size)
            verify_inclusion(leaf, index, size, path, root)

        check("inclusion %d in %d" % (index, size), inclusion_check)

    for c in doc.get("consistency", []):
        first, second = c["from"], c["to"]
        fh, sh = b64(c["from_root"]), b64(c["to_root"])
        path = [b64(h) for h in c["path"]]

        def consistency_check(first=first, second=second, fh=fh, sh=sh, path=path):
            if own_root(first) != fh:
                raise Rejected("the first root is not MTH of the first %d leaves" % first)
            if own_root(second) != sh:
                raise Rejected("the second root is not MTH of the first %d leaves" % second)
            verify_consistency(first, second, fh, sh, path)

        check("consistency %d to %d" % (first, second), consistency_check)

    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    try:
        main()
    except (ValueError, KeyError, TypeError) as e:
        print("malformed input: %s" % e)
        sys.exit(2)

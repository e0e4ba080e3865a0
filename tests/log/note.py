#!/usr/bin/env python3
"""An independent check of arbiter's signed checkpoints (tests/log.rs),
written from C2SP signed-note and tlog-checkpoint with Python's hashlib,
base64 and `cryptography` (Ed25519).

    python3 note.py KEY_FILE NOTE_FILE...

KEY_FILE holds the verifier key as `arbiter checkpoint --public-key` prints
it: `name+hex(key id)+base64(0x01 || public key)`. Each NOTE_FILE holds a
signed note as `arbiter checkpoint` (or GET /checkpoint) prints it.

Checks: the key id is the first 4 bytes of SHA-256(name || "\\n" || 0x01 ||
public key); the note is text, a blank line, then signature lines
`\u2014 name base64(key id || signature)`; one of them is by this key (name
and key id) and its Ed25519 signature verifies over every byte before the
blank line, including the last newline; the signed text is a checkpoint
(origin = the key's name, a decimal size, a base64 32-byte root).

Base64 must be canonical (as arbiter writes it): a signature whose unused
trailing bits were changed is a changed note, and is refused.

Prints, for each note, `ok <origin> <size> <base64 root>` or `REJECTED:
<why>`; exits 0 when every note verified, 1 when any was rejected.
"""

import base64
import hashlib
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


class Rejected(Exception):
    pass


def unb64(text):
    """Strict base64: alphabet, padding, and zero unused bits."""
    raw = base64.b64decode(text, validate=True)
    if base64.b64encode(raw).decode("ascii") != text:
        raise Rejected("%r is not canonical base64" % text)
    return raw


def parse_key(text):
    text = text.strip()
    # The base64 key may hold '+': split off the name and the id only.
    parts = text.split("+", 2)
    if len(parts) != 3:
        raise Rejected("the key is not name+id+key")
    name, key_id_hex, key_b64 = parts
    if not name or any(c.isspace() for c in name):
        raise Rejected("bad key name %r" % name)
    if len(key_id_hex) != 8:
        raise Rejected("the key id is not 8 hex digits")
    key_id = bytes.fromhex(key_id_hex)
    key = unb64(key_b64)
    if len(key) != 33 or key[0] != 0x01:
        raise Rejected("not an Ed25519 signed-note key (0x01 || 32 bytes)")
    computed = hashlib.sha256(name.encode() + b"\n" + key).digest()[:4]
    if computed != key_id:
        raise Rejected("the key id %s is not SHA-256(name, newline, key)[:4] = %s" % (key_id_hex, computed.hex()))
    return name, key_id, Ed25519PublicKey.from_public_bytes(key[1:])


def verify(key_text, note):
    name, key_id, public = parse_key(key_text)
    if not note.endswith(b"\n"):
        raise Rejected("the note does not end in a newline")
    at = note.find(b"\n\n")
    if at < 0:
        raise Rejected("no blank line before the signatures")
    body, sigs = note[: at + 1], note[at + 2 :]
    lines = sigs.decode("utf-8").split("\n")
    if lines[-1] != "" or len(lines) < 2:
        raise Rejected("no signature lines")
    good = False
    for line in lines[:-1]:
        prefix = "\u2014 "
        if not line.startswith(prefix) or " " not in line[len(prefix) :]:
            raise Rejected("%r is not a signature line" % line)
        signer, blob = line[len(prefix) :].split(" ", 1)
        blob = unb64(blob)
        if signer != name or blob[:4] != key_id:
            continue
        if len(blob) != 4 + 64:
            raise Rejected("an Ed25519 signature is 64 bytes")
        try:
            public.verify(blob[4:], body)
            good = True
        except InvalidSignature:
            pass
    if not good:
        raise Rejected("no valid signature by %s over the note's text" % name)
    text = body.decode("utf-8").split("\n")
    if len(text) != 4 or text[3] != "":
        raise Rejected("a checkpoint is three lines: origin, size, root")
    origin, size, root = text[:3]
    if origin != name:
        raise Rejected("the origin %r is not the key's name %r" % (origin, name))
    if not size.isdigit() or (len(size) > 1 and size[0] == "0"):
        raise Rejected("the size %r is not a decimal number" % size)
    if len(unb64(root)) != 32:
        raise Rejected("the root is not 32 bytes")
    return origin, int(size), root


def main():
    with open(sys.argv[1], "r", encoding="utf-8") as f:
        key_text = f.read()
    failed = 0
    for path in sys.argv[2:]:
        with open(path, "rb") as f:
            note = f.read()
        try:
            origin, size, root = verify(key_text, note)
            print("ok %s %d %s" % (origin, size, root))
        except (Rejected, ValueError, UnicodeDecodeError) as e:
            failed += 1
            print("REJECTED: %s" % e)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

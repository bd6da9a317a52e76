#!/usr/bin/env python3
"""Manifest signature vectors, reproducing PBS's own test.

proxmox-backup pbs-datastore/src/manifest.rs test_manifest_signature: key =
scrypt(b"test", salt=b"", n=65536, r=8, p=1, 32 bytes) (pbs-key-config
derive_key); manifest host/elsa/2020-06-26T13:56:05Z with test1.img.fidx
(200, [1;32], encrypt) and abc.blob (200, [2;32], none), an unprotected note;
signature = HMAC-SHA256(id_key, canonical JSON of the manifest without
"unprotected" and "signature"), expected
d7b446fb7db081662081d4b40fedd858a1d6307a5aff4ecff7d5bf4fd35679e9.
Canonical JSON (PBS to_canonical_json): keys sorted, no whitespace, strings
as serde_json writes them (non-ASCII raw), null rejected.
Usage: python3 gen_manifest_vectors.py > manifest-vectors.json
"""
import calendar
import hashlib
import hmac
import json
import time

PBS_SIGNATURE = "d7b446fb7db081662081d4b40fedd858a1d6307a5aff4ecff7d5bf4fd35679e9"


def canonical(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def signature(key, manifest):
    idk = hashlib.pbkdf2_hmac("sha256", key, b"_id_key", 10, 32)
    signed = {k: v for k, v in manifest.items() if k not in ("unprotected", "signature")}
    return hmac.new(idk, canonical(signed), hashlib.sha256).hexdigest()


key = hashlib.scrypt(b"test", salt=b"", n=65536, r=8, p=1, maxmem=128 << 20, dklen=32)
manifest = {
    "backup-type": "host",
    "backup-id": "elsa",
    "backup-time": calendar.timegm(time.strptime("2020-06-26T13:56:05Z", "%Y-%m-%dT%H:%M:%SZ")),
    "files": [
        {"filename": "test1.img.fidx", "crypt-mode": "encrypt", "size": 200, "csum": "01" * 32},
        {"filename": "abc.blob", "crypt-mode": "none", "size": 200, "csum": "02" * 32},
    ],
    "unprotected": {"note": "This is not protected by the signature."},
}
sig = signature(key, manifest)
assert sig == PBS_SIGNATURE, sig  # PBS's own expected value

# A second manifest with strings that need escaping and non-ASCII text,
# keys out of order, and nested objects, to pin the canonical form.
other = {
    "files": [{"size": 1, "filename": "a\"b\\c\n\t\u0001\u00e9\u4e2d/x.didx", "csum": "ab" * 32,
               "crypt-mode": "sign-only"}],
    "backup-time": 1700000000,
    "backup-id": "\u00fcber",
    "backup-type": "vm",
    "zzz": {"b": [True, False, 0, -5, 18446744073709551615], "a": "\u007f"},
    "signature": "ignored",
    "unprotected": {"key-fingerprint": "ignored"},
}
out = {
    "key": key.hex(),
    "manifests": [
        {"json": json.dumps(manifest, indent=2),
         "canonical": canonical({k: v for k, v in manifest.items() if k != "unprotected"}).decode(),
         "signature": sig},
        {"json": json.dumps(other, indent=2, ensure_ascii=True),
         "canonical": canonical({k: v for k, v in other.items() if k not in ("unprotected", "signature")}).decode(),
         "signature": signature(key, other)},
    ],
}
print(json.dumps(out, indent=1))

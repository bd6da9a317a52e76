#!/usr/bin/env python3
"""Encrypted DataBlob vectors for package chunk, made independently of cairn.

Follows proxmox-backup pbs-datastore/src/data_blob.rs and file_formats.rs:
  blob = magic[8] | crc32 LE[4] | iv[16] | tag[16] | AES-256-GCM ciphertext
  crc32 (IEEE, as crc32fast) covers what follows the 44-byte header only,
  i.e. the ciphertext (header_size(magic) is the encrypted header's size);
  AAD is empty; MagicEncryptedZstd blobs encrypt a zstd frame.
  Keyed chunk digest = SHA-256(plain || id_key), id_key =
  PBKDF2-HMAC-SHA256(key, b"_id_key", 10) (pbs-tools crypt_config.rs).
The zstd frames are written by hand (an RLE block and a raw block, RFC 8878),
so no zstd library is needed.

Usage:
  python3 gen_encrypted_blobs.py            # writes enc-*.blob, encrypted-vectors.json
  python3 gen_encrypted_blobs.py decode FILE  # key hex on stdin; prints JSON:
      {"kind", "crc_ok", "payload"}: payload is the decrypted (still zstd
      for MagicEncryptedZstd) bytes in hex; exit 1 if the CRC or tag fails.
"""
import hashlib
import json
import struct
import sys
import zlib

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

MAGIC_ENCRYPTED = bytes([123, 103, 133, 190, 34, 45, 76, 240])
MAGIC_ENCRYPTED_ZSTD = bytes([230, 89, 27, 191, 11, 191, 216, 11])
KEY = bytes(range(32))


def stream(seed, n):
    out = b""
    i = 0
    while len(out) < n:
        out += hashlib.sha256(seed + i.to_bytes(4, "little")).digest()
        i += 1
    return out[:n]


def id_key(enc):
    return hashlib.pbkdf2_hmac("sha256", enc, b"_id_key", 10, 32)


def zstd_frame(blocks):
    """A zstd frame of ("rle", byte, count) and ("raw", bytes) blocks,
    single segment with a 4-byte frame content size, no checksum."""
    size = sum(b[2] if b[0] == "rle" else len(b[1]) for b in blocks)
    out = struct.pack("<I", 0xFD2FB528) + bytes([0xA0]) + struct.pack("<I", size)
    for i, b in enumerate(blocks):
        last = 1 if i == len(blocks) - 1 else 0
        if b[0] == "rle":
            out += struct.pack("<I", last | (1 << 1) | (b[2] << 3))[:3] + bytes([b[1]])
        else:
            out += struct.pack("<I", last | (0 << 1) | (len(b[1]) << 3))[:3] + b[1]
    return out, size


def blob(magic, payload, iv):
    sealed = AESGCM(KEY).encrypt(iv, payload, b"")
    ct, tag = sealed[:-16], sealed[-16:]
    crc = zlib.crc32(ct) & 0xFFFFFFFF
    return magic + struct.pack("<I", crc) + iv + tag + ct


def generate():
    idk = id_key(KEY)
    vectors = {"key": KEY.hex(), "blobs": []}
    plain = stream(b"encrypted blob", 5000)
    frame, _ = zstd_frame([("rle", ord("z"), 4000), ("raw", b"hello cairn\n")])
    zplain = b"z" * 4000 + b"hello cairn\n"
    cases = [
        ("enc-plain.blob", MAGIC_ENCRYPTED, plain, plain),
        ("enc-empty.blob", MAGIC_ENCRYPTED, b"", b""),
        ("enc-zstd.blob", MAGIC_ENCRYPTED_ZSTD, frame, zplain),
    ]
    for n, (name, magic, payload, data) in enumerate(cases):
        b = blob(magic, payload, stream(b"blob iv %d" % n, 16))
        with open(name, "wb") as f:
            f.write(b)
        vectors["blobs"].append({
            "file": name,
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "digest": hashlib.sha256(data + idk).hexdigest(),
        })
    with open("encrypted-vectors.json", "w") as f:
        json.dump(vectors, f, indent=1)
        f.write("\n")


def decode(path):
    key = bytes.fromhex(sys.stdin.read().strip())
    raw = open(path, "rb").read()
    magic = raw[:8]
    kind = {MAGIC_ENCRYPTED: "encrypted", MAGIC_ENCRYPTED_ZSTD: "encrypted+zstd"}.get(magic)
    if kind is None or len(raw) < 44:
        print(json.dumps({"error": "not an encrypted blob"}))
        return 1
    (crc,) = struct.unpack("<I", raw[8:12])
    crc_ok = crc == zlib.crc32(raw[44:]) & 0xFFFFFFFF
    try:
        payload = AESGCM(key).decrypt(raw[12:28], raw[44:] + raw[28:44], b"")
    except InvalidTag:
        print(json.dumps({"kind": kind, "crc_ok": crc_ok, "error": "tag"}))
        return 1
    print(json.dumps({"kind": kind, "crc_ok": crc_ok, "payload": payload.hex()}))
    return 0 if crc_ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "decode":
        sys.exit(decode(sys.argv[2]))
    generate()

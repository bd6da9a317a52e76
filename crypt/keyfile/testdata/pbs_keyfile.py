#!/usr/bin/env python3
"""Independent implementation of Proxmox Backup Server's key file format.

Written from pbs-key-config/src/lib.rs and pbs-tools/src/crypt_config.rs in
proxmox/proxmox-backup, with Python's `cryptography` package and hashlib; it
shares no code with cairn.

  pbs_keyfile.py gen DIR       write the known-answer key files and
                               expected.json into DIR
  pbs_keyfile.py load FILE     decrypt FILE with the passphrase on stdin and
                               print {"key": hex, "fingerprint": "aa:bb:.."}
  pbs_keyfile.py recover PRIV.pem BLOB
                               decrypt the master key PRIV.pem with the
                               passphrase on stdin, unwrap BLOB (PBS's
                               rsa_encrypt_key_config) and print the key file
  pbs_keyfile.py paperkey FILE print FILE as PBS's `key paperkey
                               --output-format text` does, without the QR
                               codes (PBS has qrencode draw them)
"""
import base64
import hashlib
import json
import sys
import calendar

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

# sha256(b"Proxmox Backup Encryption Key Fingerprint"), crypt_config.rs
FINGERPRINT_INPUT = hashlib.sha256(b"Proxmox Backup Encryption Key Fingerprint").digest()


def fingerprint(key: bytes) -> str:
    id_key = hashlib.pbkdf2_hmac("sha256", key, b"_id_key", 10, 32)
    digest = hashlib.sha256(FINGERPRINT_INPUT + id_key).digest()
    return ":".join("%02x" % b for b in digest)


def derive(kdf: dict, passphrase: bytes) -> bytes:
    (name, p), = kdf.items()
    salt = base64.b64decode(p["salt"])
    if name == "Scrypt":
        return Scrypt(salt=salt, length=32, n=p["n"], r=p["r"], p=p["p"]).derive(passphrase)
    if name == "PBKDF2":
        return hashlib.pbkdf2_hmac("sha256", passphrase, salt, p["iter"], 32)
    raise ValueError("unknown kdf " + name)


def make(key: bytes, kdf, passphrase: bytes, iv: bytes, created: str, modified: str, hint=None) -> str:
    if kdf is None:
        data = key
    else:
        sealed = AESGCM(derive(kdf, passphrase)).encrypt(iv, key, b"")
        data = iv + sealed[-16:] + sealed[:-16]  # iv | tag | ciphertext
    cfg = {"kdf": kdf, "created": created, "modified": modified,
           "data": base64.b64encode(data).decode(), "fingerprint": fingerprint(key)}
    if hint is not None:
        cfg["hint"] = hint
    return json.dumps(cfg, separators=(",", ":"))


def load(text: str, passphrase: bytes) -> bytes:
    cfg = json.loads(text)
    data = base64.b64decode(cfg["data"])
    if cfg["kdf"] is None:
        key = data
    else:
        iv, tag, ct = data[:16], data[16:32], data[32:]
        key = AESGCM(derive(cfg["kdf"], passphrase)).decrypt(iv, ct + tag, b"")
    if len(key) != 32:
        raise ValueError("key is not 32 bytes")
    if cfg.get("fingerprint") is not None and cfg["fingerprint"] != fingerprint(key):
        raise ValueError("fingerprint mismatch")
    return key


def gen(out: str) -> None:
    key = bytes(range(0x40, 0x60))  # the raw AES key of every vector
    salt = base64.b64encode(bytes(range(1, 33))).decode()
    iv = bytes(range(0xa0, 0xb0))
    pw = b"correct horse"
    files = {
        "scrypt.key": make(key, {"Scrypt": {"n": 1024, "r": 8, "p": 1, "salt": salt}}, pw, iv,
                           "2026-12-01T18:30:00+01:00", "2026-12-01T17:31:00Z"),
        # PBS's own parameters (KeyConfig::with_key), for the bounds' test
        "scrypt-pbs.key": make(key, {"Scrypt": {"n": 65536, "r": 8, "p": 1, "salt": salt}}, pw, iv,
                               "2026-12-01T18:30:00+01:00", "2026-12-01T17:31:00Z"),
        "pbkdf2.key": make(key, {"PBKDF2": {"iter": 1000, "salt": salt}}, pw, iv,
                           "2026-12-01T17:30:00Z", "2026-12-01T17:30:00Z", hint="a horse"),
        "none.key": make(key, None, b"", iv, "2026-12-01T17:30:00Z", "2026-12-01T17:30:00Z"),
    }
    assert calendar.timegm((2026, 12, 1, 17, 30, 0)) == 1796146200
    for name, text in files.items():
        with open(f"{out}/{name}", "w") as f:
            f.write(text)
        assert load(text, pw) == key
    # The RSA master key (4096 bits as PBS: a key file is too long for one
    # PKCS#1 v1.5 block of 2048), its
    # private half as encrypted PKCS#8 PEM, and pbkdf2.key wrapped for it.
    master = rsa.generate_private_key(public_exponent=65537, key_size=4096)
    with open(f"{out}/master-private.pem", "wb") as f:
        f.write(master.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.BestAvailableEncryption(b"master pass")))
    with open(f"{out}/master-public.pem", "wb") as f:
        f.write(master.public_key().public_bytes(serialization.Encoding.PEM,
                                                 serialization.PublicFormat.SubjectPublicKeyInfo))
    with open(f"{out}/rsa-encrypted.key.blob", "wb") as f:
        f.write(master.public_key().encrypt(files["pbkdf2.key"].encode(), padding.PKCS1v15()))
    for name in ("scrypt.key", "master-private.pem"):
        with open(f"{out}/{name}.paperkey", "w") as f:
            f.write(paperkey(open(f"{out}/{name}").read()))
    exp = {"key": key.hex(), "passphrase": pw.decode(), "fingerprint": fingerprint(key),
           "created_unix": 1796146200, "modified_unix": {"scrypt.key": 1796146260, "scrypt-pbs.key": 1796146260,
           "pbkdf2.key": 1796146200, "none.key": 1796146200}}
    with open(f"{out}/expected.json", "w") as f:
        json.dump(exp, f, indent=1)
        f.write("\n")


def paperkey(text: str) -> str:
    """src/tools/paperkey.rs: a PEM key as numbered lines in blocks of 5,
    a key file re-serialised pretty (serde_json::to_string_pretty)."""
    if text.startswith("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"):
        lines = [l.rstrip() for l in text.rstrip().split("\n") if l.rstrip()]
        out = []
        for i in range(0, len(lines), 5):
            out += ["%2d: %s" % (i + j, l) for j, l in enumerate(lines[i:i + 5])]
            out.append("\f")  # qrencode's drawing, then a page break
        return "\n".join(out) + "\n"
    cfg = json.loads(text)
    pretty = json.dumps(cfg, indent=2, ensure_ascii=False)
    return "-----BEGIN PROXMOX BACKUP KEY-----\n" + pretty + "\n-----END PROXMOX BACKUP KEY-----\n"


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    elif sys.argv[1] == "load":
        k = load(open(sys.argv[2]).read(), sys.stdin.buffer.read().rstrip(b"\n"))
        print(json.dumps({"key": k.hex(), "fingerprint": fingerprint(k)}))
    elif sys.argv[1] == "paperkey":
        sys.stdout.write(paperkey(open(sys.argv[2]).read()))
    elif sys.argv[1] == "recover":
        with open(sys.argv[2], "rb") as f:
            priv = serialization.load_pem_private_key(f.read(), sys.stdin.buffer.read().rstrip(b"\n"))
        with open(sys.argv[3], "rb") as f:
            print(priv.decrypt(f.read(), padding.PKCS1v15()).decode())

// Package keyfile reads and writes encryption key files in Proxmox Backup
// Server's format (pbs-key-config KeyConfig), so a key made by
// proxmox-backup-client works in cairn and the other way round.
//
// A key file is one JSON object; PBS writes it without white space:
//
//	{
//	  "kdf": {"Scrypt": {"n": 65536, "r": 8, "p": 1, "salt": B64}}
//	       | {"PBKDF2": {"iter": 65535, "salt": B64}}
//	       | null,                       (the key is stored in the clear)
//	  "created":  RFC 3339 time,         (kept by change-passphrase)
//	  "modified": RFC 3339 time,
//	  "data": B64,                       (see below)
//	  "fingerprint": "aa:bb:…:ff",       (32 bytes, optional on read)
//	  "hint": "…"                        (optional password hint)
//	}
//
// B64 is standard base64 with padding. With a kdf, the passphrase and the
// salt give a 32-byte key (scrypt, or PBKDF2-HMAC-SHA256) that encrypts
// the 32-byte AES key with AES-256-GCM and empty associated data:
//
//	data = iv[16] | tag[16] | ciphertext[32]
//
// Without a kdf, data is the 32-byte key itself. The fingerprint is the
// key's crypt.Fingerprint; Decrypt checks it against the key it recovers.
//
// Every key file is hostile input: Parse bounds the kdf parameters
// (MaxScryptMemory, MaxScryptWork, MaxPBKDF2Iter) before any derivation
// runs, so a crafted file cannot make cairn allocate gigabytes or spin
// for hours, and every error names the file. Errors match the sentinels with errors.Is.
package keyfile

// Package crypt owns cairn's client-side encryption keys as Proxmox
// Backup Server defines them (pbs-tools crypt_config.rs): a 32-byte
// AES-256 key, the id_key derived from it, the keyed chunk digest
// SHA-256(data ‖ id_key) that keeps chunks of different keys (and plain
// ones) from ever deduplicating with each other, the key's fingerprint,
// the HMAC authentication tag that signs manifests, and AES-256-GCM with a
// random 16-byte IV and empty associated data.
//
// It sits at the bottom of the layering beside package chunk (which uses
// it for the encrypted DataBlob codec) and imports neither chunk nor
// store. Key files (PBS's JSON format, passphrases, the RSA master key)
// are package crypt/keyfile.
//
// A Key never prints its bytes: it has no String of its own, and Wipe
// zeroes them when the command is done with it.
package crypt

// Package crypt owns cairn's client-side encryption keys as Proxmox
// Backup Server defines them (pbs-tools crypt_config.rs):
//
//	enc_key     32 random bytes, the AES-256 key
//	id_key      PBKDF2-HMAC-SHA256(enc_key, salt "_id_key", 10 iterations), 32 bytes
//	digest(d)   SHA-256(d ‖ id_key)            the keyed chunk digest
//	auth_tag(d) HMAC-SHA256(id_key, d)         signs manifests
//	fingerprint digest(SHA-256("Proxmox Backup Encryption Key Fingerprint"))
//	            printed 6f:10:a0:...:7a (32 bytes), short form the first 8
//	seal(p)     AES-256-GCM(enc_key, iv[16] random, aad empty) -> ciphertext, tag[16]
//
// The keyed digest keeps chunks of different keys (and plain ones) from
// ever deduplicating with each other. A manifest's signature is
// auth_tag(canonical JSON of the manifest without "unprotected" and
// "signature"), hex in "signature"; the key's fingerprint goes to
// "unprotected"."key-fingerprint" (manifest.rs).
//
// It sits at the bottom of the layering beside package chunk (which uses
// it for the encrypted DataBlob codec) and imports neither chunk nor
// store. Key files (PBS's JSON format, passphrases, the RSA master key)
// are package crypt/keyfile.
//
// A Key keeps enc_key and id_key in a page of their own, mlocked and
// excluded from core dumps where the OS allows; it never prints them (its
// Format shows the short fingerprint), and Wipe zeroes and unmaps them
// when the command is done with the key.
package crypt

// Package pbscheck checks a snapshot of a cairn store against the rules
// of Proxmox Backup Server's own readers, with code of its own: it does
// not import cairn's store, store/pxar or chunk packages, so that a
// mistake shared by cairn's writer and cairn's reader cannot hide here.
// The layouts come from proxmox/proxmox-backup (pbs-datastore:
// data_blob.rs, file_formats.rs, dynamic_index.rs, fixed_index.rs,
// manifest.rs) and proxmox/pxar (src/format/mod.rs, src/decoder/mod.rs,
// src/encoder/mod.rs, src/binary_tree_array.rs).
//
// Check (CheckSnapshot) reads a snapshot directory and verifies:
//
//   - the manifest index.json.blob: DataBlob magic, CRC-32, zstd, JSON
//     with the snapshot's type, id and time;
//   - every .didx/.fidx it lists: magic, sizes, index_csum (SHA-256 of
//     the entries as stored) and data size against the manifest's
//     files[] csum and size; every .blob: size and SHA-256;
//   - every chunk an index references: present, magic, CRC-32 (for
//     encrypted blobs: over the ciphertext, after iv and tag, as PBS),
//     and for plain snapshots decoded length = the index's chunk length
//     and SHA-256(plain) = digest;
//   - every split pxar archive (NAME.mpxar.didx + NAME.ppxar.didx) of a
//     plain snapshot, decoded front to back as pxar's sequential decoder
//     does while the payload stream is read forward only (DecodeSplit).
//
// DecodeSplit is the pxar part on its own, over two io.Readers, so that
// tests can hand it crafted streams.
package pbscheck

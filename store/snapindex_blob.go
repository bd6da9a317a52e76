package store

// decodedBlobSizes counts a plain snapshot's blobs in sum.Size by their
// decoded size, as the mount lists them (ListingOf): the manifest gives
// a blob's stored file (its 12-byte header and the zstd frame), so a
// 13-byte configuration showed as 25 B. An encrypted snapshot's blobs
// keep their stored size (a listing reads no key). False when a blob did
// not read or decode: the summary then keeps the stored size and is not
// cached.
func (s *Store) decodedBlobSizes(snap Snapshot, m *Manifest, sum *ManifestSummary) bool {
	if !plainManifest(m) {
		return true
	}
	l, _, err := s.ListingOf(snap, m)
	if err != nil {
		return false
	}
	listedBlobSizes(m, &l, sum)
	return true
}

// listedBlobSizes is decodedBlobSizes from a listing, which holds each
// plain blob's decoded size.
func listedBlobSizes(m *Manifest, l *SnapListing, sum *ManifestSummary) {
	if !plainManifest(m) {
		return
	}
	stored := map[string]uint64{}
	for _, a := range Archives(m) {
		if a.Kind == ArchiveBlob {
			stored[a.Name] = a.Size
		}
	}
	for _, a := range l.Archives {
		if z, ok := stored[a.Name]; ok && a.Kind == ArchiveBlob {
			sum.Size = sum.Size - z + a.Size
		}
	}
}

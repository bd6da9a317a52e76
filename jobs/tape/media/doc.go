// Package media owns what lies above single tapes: the inventory of
// labelled tapes, media pools that hand out tapes, media sets that span
// tapes, and the pool writer that fills a media set with chunk and
// snapshot archives, continuing on the next tape at the logical end of
// media, keeping one media catalog per tape. It also rebuilds a tape's
// catalog by reading the tape and reads archives back for restore.
//
// State lives beside the virtual drive (package drive):
//
//	<drive>/inventory.json          labelled tapes: media label, media set label, full flag
//	<drive>/catalog/<uuid>.log      media catalog per tape (package catalog)
//
// As in PBS, file 0 of a tape is its media label, file 1 its media set
// label; a tape joining a media set after the first one starts with
// catalog archives of the set's earlier tapes.
package media

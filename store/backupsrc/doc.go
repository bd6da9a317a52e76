// Package backupsrc owns the sources of a backup (NAME.img:PATH,
// NAME.pxar:DIR, NAME.blob:PATH; PATH "-" is standard input): images and
// blobs opened and sized before anything is written, blobs bounded and
// read whole, images streamed into the store.Backup (Spec, Open,
// Inputs), and the backup's progress display over all of them
// (Progress).
package backupsrc

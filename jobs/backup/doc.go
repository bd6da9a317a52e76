// Package backup is the backup of local paths (images, directory trees,
// blobs) into a new snapshot, as `cairn backup` makes it and as a job
// (Kind) of the job framework, so that cairn serve runs scheduled
// backups the way it runs verify, prune and gc:
//
//   - engine.go: Run, one backup from opened sources (backupsrc.Inputs)
//     to its summary (backupsum.Summary): the store's backup or dry run
//     started, encryption, each image and file archive added, the
//     manifest last; Options, what the command line and the job fill;
//   - kind.go: the job (Kind, KindName), its key=value parameters
//     (ParseParams: group, ns, sources, change-detection-mode, workers,
//     all-file-systems) and its Report.
//
// The sources' parsing and opening are package backupsrc's, the file
// archives package filearchive's.
package backup

package store

// DropEmptyGroup removes group g's directory when it holds no snapshot:
// a writer that made the group (a backup, a tape restore) and kept
// nothing leaves no empty directory for the mount to show. The caller
// holds g's backup lock (LockGroup), as ForgetGroup does when it removes
// a group; a backup waiting for that lock takes the new directory's.
func (s *Store) DropEmptyGroup(g Group) {
	if snaps, err := s.Snapshots(g); err == nil && len(snaps) == 0 && s.CheckGroupDirs(g) == nil {
		removeViaTrash(s.GroupPath(g), g.ID)
	}
}

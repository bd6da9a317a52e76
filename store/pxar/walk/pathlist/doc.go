// Package pathlist owns the lists of paths that restrict a backup's
// directory tree (restic's --files-from, --files-from-verbatim and
// --files-from-raw): each listed path with everything below it, and the
// directories on the way to it. A path is relative to the tree's
// directory, or absolute inside it. Read parses the lists into the
// walk's selection (walk.Selection, bounded in lines, paths and bytes);
// Warn reports what the walk did not meet.
package pathlist

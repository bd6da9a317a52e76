// Package browse owns reading a file archive for people: the walk in
// stored order with bounded memory (Walk), an entry as ls -l prints it
// and as the JSON listing of ls and find holds it (WriteLong, EntryJSON,
// JSONListing, Owners for the host's user and group names), and find's
// tests (Test, Glob, ParseTypes, ParseNewer), and the paths a shell
// completes (Complete). It writes only to the writers it is given.
package browse

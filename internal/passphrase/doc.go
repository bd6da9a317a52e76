// Package passphrase owns reading a passphrase: from a file a flag or an
// environment variable names (its first line, bounded; what is not a
// regular file refused without blocking), else from the terminal without
// echo, twice to confirm a new one.
package passphrase

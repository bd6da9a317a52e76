// Package manpage owns writing man(7) pages (section 1) from a cobra
// command tree and a Manual (its examples and tables): a page a command
// with its synopsis, description, commands, options, examples, exit
// status, environment and files, every text escaped by the roff writer
// so that nothing of it is read as a request or an escape. The manual's
// content is the command line's (cmd/cairn).
package manpage

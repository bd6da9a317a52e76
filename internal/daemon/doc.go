// Package daemon owns running `cairn mount --daemon` in the background:
// Go cannot fork, so the program runs itself again as a child in a new
// session (Start), which mounts in the foreground code path and, once
// the mount is ready (Ready), moves its output onto the log file and
// tells the waiting parent. A child that fails first is the parent's
// *ExitError, with the child's own message and exit code.
package daemon

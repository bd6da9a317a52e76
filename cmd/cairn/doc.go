// Command cairn is the command-line front end of cairn: it creates
// stores, backs up images, lists snapshots, streams archives, mounts the
// store and runs jobs. Each command lives in a file of its own; the logic
// lives in the packages it calls, and every command runs in-process
// through run, so tests can drive it without a subprocess.
package main

// Command cairn is the command-line front end of cairn: it creates
// stores, backs up images, lists snapshots, streams archives, mounts the
// store and runs jobs. Each command lives in a file of its own and is
// added in one place, rootCmd in root.go; every kind of job is listed
// in one place, serve.Kinds, which jobkinds.go registers for the mount's
// .jobs tree and the foreground commands alike, as cairn serve does. The logic lives in the packages it calls
// (one package per job kind), and every command runs in-process through
// run, so tests can drive it without a subprocess.
//
// Encryption keys (keyfiles.go): the commands that read or write archive
// data take --keyfile (keyfileFlags); openStore loads the key files once
// per command, before the store is opened, and gives them to the store
// (store.Store.SetKeys), through which every reader and job finds a
// snapshot's key; run wipes them at exit. Only fingerprints are printed.
//
// The manual (manual.go, manual_examples.go): the exit codes, the
// environment, the files and each command's examples are kept once;
// `cairn gen man` renders them into the man pages (gen_man.go, with
// internal/manpage), --help shows the examples, and
// readme_test.go keeps the README's tables the same text.
package cli

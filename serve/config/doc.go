// Package config reads the configuration file of cairn serve (TOML, see
// contrib/serve.toml.example): the store, the HTTP listener, the mount
// to keep, the scheduled jobs, the groups watched for staleness and the
// notifications.
//
// What the package owns:
//
//   - config.go: the types the daemon codes against (Config, Job,
//     Stale, Notify, …), Load and Parse, and the defaults;
//   - decode.go: the strict TOML decoding (github.com/pelletier/go-toml/v2):
//     unknown keys and values of the wrong type are errors with the line;
//   - lines.go: the line of every table and key, for messages, and the
//     keys the decoder matched in another case (refused as unknown);
//   - errors.go: Error (file, line, field, what) and ErrInvalid;
//   - validate.go, validate_notify.go: the checks of every field (kinds,
//     schedules through serve/calendar, groups and namespaces through
//     store, sources through store/backupsrc, URLs, mail addresses);
//   - age.go: max_age, a Go duration or days ("2d", "1d12h").
//
// Every input is hostile: the file is at most MaxFileSize bytes with at
// most MaxJobs jobs, and every error is an *Error naming the file, the
// line and the field ("/etc/cairn/serve.toml:14: job \"nightly\":
// schedule \"dialy\": unknown word \"dialy\" (column 1)").
package config

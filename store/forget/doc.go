// Package forget owns removing snapshots and groups as cairn forget
// does: each snapshot's outcome (removed, protected, locked, not found,
// failed; a dry run judges without removing), a group removed once all
// its snapshots are, and the report as text (WriteText) or JSON.
package forget

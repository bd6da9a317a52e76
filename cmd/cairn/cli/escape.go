package cli

import "github.com/cairnfs/cairn/internal/termsafe"

// Every string a human output takes from stored data (a manifest's
// notes, verify state, archive names and key fingerprint; paths inside
// archives; names from tapes; errors and job messages that quote them)
// goes through one of these (internal/termsafe), so that none reaches a
// terminal as a control sequence. JSON output is escaped by its encoder.
var (
	// quoteName is for names and fields in columns and lists: as it is
	// when printable, else Go-quoted.
	quoteName = termsafe.Quote
	// escapeText is for free text (errors, log and job lines): what a
	// terminal would interpret is written as Go escapes, the rest as it is.
	escapeText = termsafe.Escape
)

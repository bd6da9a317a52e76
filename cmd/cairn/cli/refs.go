package cli

import (
	"github.com/cairnfs/cairn/store"
	"github.com/spf13/cobra"
)

// nsFlag adds --ns to a command that takes snapshot or group arguments:
// every such command names namespaces the same way.
func nsFlag(cmd *cobra.Command, ns *string) {
	cmd.Flags().StringVar(ns, "ns", "", "namespace of the snapshot arguments, e.g. prod/db (also written ns/prod/ns/db/TYPE/ID)")
}

// parseRefIn parses a snapshot reference "[ns/NAME/…]TYPE/ID[/TIME|/latest]"
// taken in namespace ns (--ns). A reference naming its own namespace is
// accepted when --ns is empty or names the same one; a different one is a
// usage error rather than a guess.
func parseRefIn(ns, arg string) (store.Ref, error) {
	if err := store.NS(ns).Check(); err != nil {
		return store.Ref{}, usageErr("--ns %q: %v", ns, err)
	}
	r, err := store.ParseRef(arg)
	if err != nil {
		return r, usageErr("%v", err)
	}
	switch {
	case r.NS == "":
		r.NS = store.NS(ns)
	case ns != "" && r.NS != store.NS(ns):
		return r, usageErr("snapshot %q is in namespace %q, but --ns says %q", arg, r.NS, ns)
	}
	return r, nil
}

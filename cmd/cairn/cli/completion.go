package cli

import (
	"context"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/snaplist"
	"github.com/spf13/cobra"
)

// What a positional argument is, for completion.
type argKind int

const (
	argFile     argKind = iota // the shell's own file completion
	argSnapshot                // [ns/NAME/…]TYPE/ID/TIME|latest, from the store
	argGroup                   // [ns/NAME/…]TYPE/ID
	argArchive                 // an archive of the snapshot before it
	argPath                    // a path inside that file archive
	argNone                    // nothing to complete
)

// completedArgs says what each command's arguments are; the last kind
// repeats (SNAPSHOT…). Commands missing from the tree are skipped.
var completedArgs = map[string][]argKind{
	"ls":        {argSnapshot, argArchive, argPath},
	"cat":       {argSnapshot, argArchive, argPath},
	"find":      {argSnapshot, argArchive, argPath},
	"dump":      {argSnapshot, argArchive, argPath},
	"diff":      {argSnapshot, argSnapshot, argArchive, argNone},
	"restore":   {argSnapshot, argArchive, argFile},
	"verify":    {argSnapshot},
	"forget":    {argSnapshot},
	"protect":   {argSnapshot},
	"unprotect": {argSnapshot},
	"snapshots": {argSnapshot},
	"notes":     {argSnapshot, argNone},
	"prune":     {argGroup, argNone},
	"export":    {argSnapshot}, // tape export
	"mount":     {argFile, argNone},
	"version":   {argNone},
}

// completionTimeout bounds the store reads of one completion: a slow or
// remote store gives no candidates rather than a hung shell.
const completionTimeout = 3 * time.Second

// completionCmd adds cobra's `completion bash|zsh|fish|powershell` (the
// bash script with stand-ins for bash-completion's functions,
// completion_bash.go) and the completion of snapshots, archives and
// paths to the commands.
func (a *app) completionCmd(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	useBashCompletion(root)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if kinds, ok := completedArgs[c.Name()]; ok && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = a.completeArgs(kinds)
		}
	}
	walk(root)
}

// completeArgs completes the argument after args as kinds says, with the
// store's reads bounded by completionTimeout and every error silent.
func (a *app) completeArgs(kinds []argKind) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		kind := kinds[min(len(args), len(kinds)-1)]
		switch kind {
		case argFile:
			return nil, cobra.ShellCompDirectiveDefault
		case argNone:
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ns, _ := cmd.Flags().GetString("ns") // "" for commands without --ns
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		type answer struct {
			c []cobra.Completion
			d cobra.ShellCompDirective
		}
		ch := make(chan answer, 1)
		go func() {
			defer func() {
				if recover() != nil { // a broken store never breaks the shell
					ch <- answer{nil, cobra.ShellCompDirectiveError}
				}
			}()
			c, d := a.complete(ctx, kind, ns, args, toComplete)
			ch <- answer{c, d}
		}()
		select {
		case r := <-ch:
			return r.c, r.d
		case <-ctx.Done():
			return nil, cobra.ShellCompDirectiveError | cobra.ShellCompDirectiveNoFileComp
		}
	}
}

func (a *app) complete(ctx context.Context, kind argKind, ns string, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	const fail = cobra.ShellCompDirectiveError | cobra.ShellCompDirectiveNoFileComp
	s, err := store.Open(a.storeDir)
	if err != nil {
		return nil, fail
	}
	defer s.Close()
	var out []string
	dir := cobra.ShellCompDirectiveNoFileComp
	switch kind {
	case argSnapshot, argGroup:
		out, err = snaplist.CompleteRefs(s, ns, toComplete, kind == argSnapshot)
		dir |= cobra.ShellCompDirectiveNoSpace // a group goes on with /TIME
	case argArchive:
		out, err = completeArchives(s, ns, args[len(args)-1])
	case argPath:
		out, err = a.archiveCompletions(ns, args[len(args)-2], args[len(args)-1], toComplete)
		dir |= cobra.ShellCompDirectiveNoSpace
	}
	if err != nil {
		return nil, fail
	}
	return snaplist.FilterPrefix(out, toComplete), dir
}

func completeArchives(s *store.Store, ns, ref string) ([]string, error) {
	_, m, err := resolveIn(s, ns, ref)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ar := range store.Archives(m) {
		out = append(out, ar.Name)
	}
	return out, nil
}

func resolveIn(s *store.Store, ns, ref string) (store.Snapshot, *store.Manifest, error) {
	r, err := parseRefIn(ns, ref)
	if err != nil {
		return store.Snapshot{}, nil, err
	}
	snap, err := s.Resolve(r)
	if err != nil {
		return snap, nil, err
	}
	m, err := s.ReadManifest(snap)
	return snap, m, err
}

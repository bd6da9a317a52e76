package walk

// Patterns is a list of patterns in the syntax of Options.Exclude (see
// the rules above parsePattern), for other walks over archive paths,
// such as a restore's --include and --exclude: Match is true when the
// last pattern that applies to a path is a plain one, false when it is a
// "!" one or none applies.
type Patterns struct{ l patternList }

// ParsePatterns parses patterns; an error names the bad one.
func ParsePatterns(ss []string) (Patterns, error) {
	var p Patterns
	for _, s := range ss {
		pat, err := parsePattern(s)
		if err != nil {
			return Patterns{}, err
		}
		p.l = append(p.l, pat)
	}
	return p, nil
}

// Len is the number of patterns.
func (p Patterns) Len() int { return len(p.l) }

// Match reports whether the patterns select path, relative to the root
// ("a/b", no leading "/"), of a directory if isDir.
func (p Patterns) Match(path string, isDir bool) bool {
	return p.l.excluded("/"+path, isDir)
}

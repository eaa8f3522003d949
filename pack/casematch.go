package pack

// CaseMatches returns the paths that would name the same file as want on a
// case-insensitive, normalizing file system (macOS, Windows), other than
// want itself: the file a reader meant who spelled REFERENCE.md for
// reference.md. The comparison is the one that keeps two such paths out
// of one package, so among a package's paths there is at most one.
func CaseMatches(paths []string, want string) []string {
	f := newFolder()
	key := f.key(want)
	var out []string
	for _, p := range paths {
		if p != want && f.key(p) == key {
			out = append(out, p)
		}
	}
	return out
}

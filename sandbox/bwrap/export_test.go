package bwrap

import "slices"

// EtcEntries are the host's /etc entries a sandbox may show.
func EtcEntries() []string { return slices.Clone(etcEntries) }

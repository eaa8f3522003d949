package scan

import (
	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// check is a built-in check: the findings on one file of the package (the
// scanner fills in rule, severity and file). text says whether the file
// reads as text.
type check func(u *unit, f pack.File, text bool) []skilld.Finding

// builtin returns the built-in check a rules file names.
func builtin(name string) (check, bool) {
	switch name {
	case "unicode-tags":
		return charCheck(isTag, nil, describeTags), true
	case "bidi-control":
		return charCheck(isBidi, nil, describeList("bidirectional control characters")), true
	case "zero-width":
		return charCheck(isZeroWidth, joinerAllowed, describeList("zero-width characters")), true
	case "network-undeclared":
		return networkCheck(true), true
	case "network-no-declaration":
		return networkCheck(false), true
	case "declaration-invalid":
		return declarationCheck, true
	case "native-binary":
		return binaryCheck, true
	case "archive":
		return archiveCheck, true
	}
	return nil, false
}

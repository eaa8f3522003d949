// Package confusable computes the skeletons of Unicode Technical Standard
// #39 (https://www.unicode.org/reports/tr39/#Confusable_Detection): two
// strings that look alike, such as "pdf-tools" with a Latin o and with a
// Cyrillic о, have the same skeleton.
//
// The mapping is Unicode's confusables.txt, kept here as tables that
// gen.go generates from the file (go generate); LICENSE-UNICODE is the
// data's license.
package confusable

//go:generate go run gen.go

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Skeleton returns the skeleton of s: its NFD form with every character
// confusables.txt maps replaced by its prototype, then NFD again.
// Skeletons are keys for comparison, never text to show.
//
// Characters that are neither graphic nor U+FFFD are dropped, where
// UTS #39 drops the default-ignorable ones: that is what go.mau.fi/util's
// confusable package did, which skilld used before, and skeletons are
// stored as keys, so the same input must keep its skeleton.
func Skeleton(s string) string {
	s = norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if !unicode.IsGraphic(r) && r != utf8.RuneError {
			continue
		}
		if p, ok := prototype(r); ok {
			b.WriteString(p)
		} else {
			b.WriteRune(r)
		}
	}
	return norm.NFD.String(b.String())
}

// prototype returns what confusables.txt maps r to, if it maps r.
func prototype(r rune) (string, bool) {
	i, ok := slices.BinarySearch(sources[:], r)
	if !ok {
		return "", false
	}
	start := uint16(0)
	if i > 0 {
		start = targetEnds[i-1]
	}
	return targets[start:targetEnds[i]], true
}

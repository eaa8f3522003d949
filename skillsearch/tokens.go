package skillsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxTokenBytes bounds one token: longer runs of letters (a hash, a
// base64 blob in a description) say nothing a query would match.
const maxTokenBytes = 40

// Tokens splits text into the terms the index matches: runs of letters
// and digits, lower-cased, camelCase and kebab-case split apart, common
// English words dropped, and each word stemmed so that "formatting",
// "formats" and "format" meet. Queries and skills go through the same
// function, so the stemmer need only be consistent, not linguistically
// right.
func Tokens(text string) []string {
	var out []string
	start := -1
	prev := rune(0)
	flush := func(end int) {
		if start >= 0 {
			out = appendTerm(out, text[start:end])
		}
		start = -1
	}
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !word:
			flush(i)
		case start < 0:
			start = i
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			// camelCase: a new word starts at the capital.
			flush(i)
			start = i
		}
		prev = r
	}
	flush(len(text))
	return out
}

// appendTerm adds one word, normalized, unless it carries no meaning.
func appendTerm(out []string, w string) []string {
	if len(w) > maxTokenBytes {
		return out
	}
	w = strings.ToLower(w)
	if utf8.RuneCountInString(w) < 2 && !isDigits(w) {
		return out
	}
	if stopWords[w] {
		return out
	}
	return append(out, stem(w))
}

func isDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

// stem strips the commonest English suffixes: plurals, -ing, -ed, -ly,
// -ation and a final e, leaving at least three letters.
func stem(w string) string {
	if !isASCIILetters(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && len(w) > 3 && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	for _, suf := range []string{"ation", "ing", "ed", "ly"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = w[:len(w)-len(suf)]
			if suf == "ation" {
				w += "at"
			}
			// running → runn → run
			if n := len(w); n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
				w = w[:n-1]
			}
			break
		}
	}
	if strings.HasSuffix(w, "e") && len(w) > 4 {
		w = w[:len(w)-1]
	}
	return w
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// stopWords are words too common in skill descriptions to tell one skill
// from another, and the boilerplate of "Use when …" descriptions.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be by can do does for from has have how i if in into is it its
		me my of on or our so such than that the their them then there these this those to too us use used uses using
		via was we what when where which while who why will with without you your skill skills`) {
		m[w] = true
	}
	return m
}()

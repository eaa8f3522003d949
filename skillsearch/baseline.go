package skillsearch

import (
	"strings"
	"unicode"
)

// Substring is the simplest search that could work, kept as the floor
// that benchmarks and the retrieval test measure Index against: each
// query word of three or more letters that occurs, as a substring, in a
// skill's lower-cased name or description scores one; the best scores
// win, ties to the skill given first.
func Substring(skills []Skill, query string, k int) []Hit {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) >= 3 {
			words = append(words, w)
		}
	}
	if k <= 0 || len(words) == 0 {
		return nil
	}
	scores := make([]float32, len(skills))
	var touched []int32
	for i, s := range skills {
		text := strings.ToLower(s.Name + " " + s.Description)
		for _, w := range words {
			if strings.Contains(text, w) {
				scores[i]++
			}
		}
		if scores[i] > 0 {
			touched = append(touched, int32(i))
		}
	}
	return top(touched, scores, k)
}

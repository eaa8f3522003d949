package lint

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/skilld/skilld/skillmd"
)

// MinDescription is the shortest description, in characters, that can say
// what a skill does and when to use it.
const MinDescription = 40

// minSpecificWords is how many words a description needs beyond the
// generic ones for a model to tell it from any other skill's.
const minSpecificWords = 2

func (s *skill) description() string { return s.parsed.Description }

func (s *skill) descFinding(format string, args ...any) []Finding {
	return []Finding{{File: s.file, Line: s.keyLine(skillmd.FieldDescription), Message: fmt.Sprintf(format, args...)}}
}

func checkDescShort(s *skill) []Finding {
	d := s.description()
	if d == "" {
		return nil // skill-invalid said so
	}
	if n := utf8.RuneCountInString(d); n < MinDescription {
		return s.descFinding("description is %d characters, under %d: say what the skill does and when to use it, with the words a request would use", n, MinDescription)
	}
	return nil
}

// genericWords are words that fit any skill's description: function words,
// the words of the "when to use" phrasing, and the vague nouns and verbs
// ("helper", "handles various tasks") that tell skills apart from none.
var genericWords = wordSet(`a an the and or but nor of for to in into on onto with without by at from as about
	is are be been being was were this that these those it its it's they them their there here
	i me my we our you your user users someone anyone people
	when whenever while if then than so such like also just only very really more most less other others
	some any all each every many much several various variety misc miscellaneous general generic common
	use uses used using usable useful usefully help helps helped helping helpful helper helpers
	utility utilities util utils tool tools toolkit skill skills ability abilities
	do does did doing done make makes made making get gets got getting handle handles handled handling
	manage manages managing support supports supported supporting provide provides providing
	work works working task tasks job jobs thing things stuff item items something anything everything
	need needs needed want wants wanted ask asks asked asking request requests requested
	can could will would should may might must shall able
	etc e.g i.e ie eg not no yes new good better best nice easy simple quick`)

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// specificWords returns the words of text that are not generic.
func specificWords(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '\'' && r != '.' && r != '-'
	}) {
		w = strings.Trim(w, "'.-")
		if w != "" && !genericWords[w] {
			out = append(out, w)
		}
	}
	return out
}

func checkDescVague(s *skill) []Finding {
	d := s.description()
	if d == "" {
		return nil
	}
	if words := specificWords(d); len(words) < minSpecificWords {
		return s.descFinding("description has %d specific word(s) (%s); name the formats, tools, domains or actions the skill is for", len(words), quoteWords(words))
	}
	return nil
}

func quoteWords(words []string) string {
	if len(words) == 0 {
		return "none beyond generic ones"
	}
	return `"` + strings.Join(words, `", "`) + `"`
}

// triggerPhrases are the ways a description says when to use the skill
// (compiled on first use, as is placeholderWords).
var triggerPhrases = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(when|whenever)\b` +
		`|\bif (the )?(user|you|someone|asked)\b` +
		`|\buse (it |this |this skill )?(to|for)\b` +
		`|\bfor (tasks|requests|questions|work|jobs) (that|about|involving|with|on|like)\b` +
		`|\btrigger(s|ed)?\b`)
})

func checkDescNoTrigger(s *skill) []Finding {
	d := s.description()
	if d == "" || triggerPhrases().MatchString(d) {
		return nil
	}
	return s.descFinding(`description does not say when to use the skill; add a sentence such as "Use when the user asks to …"`)
}

var placeholderWords = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(TODO|TBD|FIXME|placeholder|lorem ipsum)\b`) })

func checkDescPlaceholder(s *skill) []Finding {
	if m := placeholderWords().FindString(s.description()); m != "" {
		return s.descFinding("description is a placeholder (%q): replace it with what the skill does and when to use it", m)
	}
	return nil
}

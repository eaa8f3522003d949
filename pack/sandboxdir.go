package pack

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// maxSlugRunes keeps sandbox folder names readable and far below the
// path-length limits of any filesystem.
const maxSlugRunes = 64

// SandboxDir returns the folder, relative to a sandbox root, where the skill
// is deployed: "skills/<slug>-<hash8>". The slug makes it readable to agents
// and people; hash8, the first 8 hex digits of SHA-256 of skillID, keeps two
// skills whose names slug alike ("deploy_api", "Deploy API", "!!!") apart and
// keeps a skill in the same folder when it is renamed to a similar name. The
// result always passes CheckPath.
func SandboxDir(name, skillID string) string {
	sum := sha256.Sum256([]byte(skillID))
	return "skills/" + slug(name) + "-" + hex.EncodeToString(sum[:4])
}

// slug lowercases name and turns every run of characters other than letters,
// digits and the combining marks that follow them into one "-". NFC comes first so a precomposed and a decomposed
// "é" give the same slug instead of "e-" for the decomposed one; it is applied
// again after lowercasing, which can decompose (İ becomes i and a combining
// dot).
func slug(name string) string {
	s := norm.NFC.String(strings.ToLower(norm.NFC.String(name)))
	var b strings.Builder
	runes, dash := 0, false
	for _, r := range s {
		if runes == maxSlugRunes {
			break
		}
		// A combining mark belongs to the letter before it (Devanagari
		// vowel signs, for one); only at the start of a word is it noise.
		if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) && !dash && b.Len() > 0 {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
				runes++
				if runes == maxSlugRunes {
					break
				}
			}
			dash = false
			b.WriteRune(r)
			runes++
			continue
		}
		dash = true
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "skill"
	}
	return out
}

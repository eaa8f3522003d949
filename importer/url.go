package importer

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// Kinds of Source.
const (
	KindRepo = "repo" // the whole repository
	KindTree = "tree" // a folder: the skill there, or the skills below it
	KindBlob = "blob" // a SKILL.md file: exactly its folder
)

// Source is a parsed GitHub URL.
type Source struct {
	Owner, Repo string
	// Ref is a branch, tag or commit; "" means the repository's default
	// branch. Refs containing "/" (feature/x) cannot be given in a URL, as
	// GitHub's own URLs do not say where such a ref ends and the path
	// begins; they work when set here directly or as the default branch.
	Ref string
	// Path is the folder inside the repository (for a blob URL, the folder
	// of its SKILL.md); "" is the whole repository.
	Path string
	Kind string // KindRepo, KindTree or KindBlob
	URL  string // the URL as given
}

// expectedForms ends every refusal, so the user sees what would work.
const expectedForms = "expected https://github.com/OWNER/REPO, " +
	"https://github.com/OWNER/REPO/tree/REF/FOLDER, " +
	"https://github.com/OWNER/REPO/blob/REF/FOLDER/SKILL.md or git@github.com:OWNER/REPO.git"

// reservedOwners are first path segments of github.com pages that are not
// accounts, so github.com/orgs/x or github.com/settings/y are not mistaken
// for a repository.
var reservedOwners = map[string]bool{
	"about": true, "apps": true, "codespaces": true, "collections": true, "enterprise": true,
	"explore": true, "features": true, "login": true, "marketplace": true, "new": true,
	"notifications": true, "orgs": true, "organizations": true, "pricing": true,
	"search": true, "settings": true, "sponsors": true, "topics": true, "trending": true,
	"users": true,
}

// ignoredQuery are query parameters that only change how GitHub displays a
// page (browsers add them when copying a URL). Any other parameter might
// select something (a ref, a path) that this parser would silently drop, so
// it is refused instead.
var ignoredQuery = map[string]bool{"tab": true, "plain": true}

// ParseGitHubURL parses the URL of a GitHub repository, folder or SKILL.md.
// It accepts https://github.com/OWNER/REPO (also http, www.github.com, a
// ".git" suffix and trailing slashes), .../tree/REF[/FOLDER],
// .../blob/REF/FOLDER/SKILL.md (the name matched ignoring ASCII case; it
// selects the folder) and git@github.com:OWNER/REPO[.git]. Fragments and the
// display-only query parameters tab and plain are ignored. Anything else is
// an EINVALID error saying which forms are expected.
func ParseGitHubURL(raw string) (Source, error) {
	src := Source{URL: raw}
	s := strings.TrimSpace(raw)
	if s == "" {
		return src, badURL(raw, "the URL is empty")
	}
	var segs []string
	if rest, ok := strings.CutPrefix(s, "git@github.com:"); ok {
		if strings.ContainsAny(rest, "?#") {
			return src, badURL(raw, "an SSH URL names only a repository")
		}
		segs = strings.Split(strings.TrimRight(rest, "/"), "/")
		if len(segs) != 2 {
			return src, badURL(raw, "an SSH URL names only a repository (git@github.com:OWNER/REPO.git)")
		}
	} else {
		var err error
		if segs, err = webSegments(raw, s); err != nil {
			return src, err
		}
	}
	if len(segs) < 2 || segs[0] == "" || segs[1] == "" {
		return src, badURL(raw, "the repository is missing")
	}
	src.Owner = segs[0]
	if !validOwner(src.Owner) || reservedOwners[strings.ToLower(src.Owner)] {
		return src, badURL(raw, "%q is not a valid GitHub owner name", src.Owner)
	}
	src.Repo = segs[1]
	if len(segs) == 2 {
		// Only the bare repository form may carry ".git", as clone URLs do.
		if r := strings.TrimSuffix(src.Repo, ".git"); r != "" {
			src.Repo = r
		}
	}
	if !validRepo(src.Repo) {
		return src, badURL(raw, "%q is not a valid GitHub repository name", src.Repo)
	}
	if len(segs) == 2 {
		src.Kind = KindRepo
		return src, nil
	}
	switch segs[2] {
	case KindTree:
		if len(segs) < 4 {
			return src, badURL(raw, "a tree URL needs a branch, tag or commit after /tree/")
		}
		src.Kind, src.Path = KindTree, strings.Join(segs[4:], "/")
	case KindBlob:
		if len(segs) < 5 || !pack.IsSkillMD(segs[len(segs)-1]) {
			return src, badURL(raw, "a blob URL must point at a SKILL.md file")
		}
		src.Kind, src.Path = KindBlob, strings.Join(segs[4:len(segs)-1], "/")
	default:
		return src, badURL(raw, "/%s pages are not importable", segs[2])
	}
	src.Ref = segs[3]
	if !validRef(src.Ref) {
		return src, badURL(raw, "%q is not a valid branch, tag or commit name", src.Ref)
	}
	if src.Path != "" {
		if err := pack.CheckPath(src.Path); err != nil {
			return src, badURL(raw, "the folder %s", strings.TrimPrefix(skilld.ErrorMessage(err), "path "))
		}
	}
	return src, nil
}

// webSegments checks an http(s) github.com URL and returns its unescaped path
// segments, without the leading and trailing slashes.
func webSegments(raw, s string) ([]string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, badURL(raw, "it is not a valid github.com URL")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, badURL(raw, "only github.com URLs are supported")
	}
	if u.Opaque != "" || u.User != nil || u.Port() != "" {
		return nil, badURL(raw, "only plain github.com URLs are supported")
	}
	if h := strings.ToLower(u.Host); h != "github.com" && h != "www.github.com" {
		return nil, badURL(raw, "only github.com URLs are supported, not %q", u.Host)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, badURL(raw, "its query string is malformed")
	}
	for k := range q {
		if !ignoredQuery[k] {
			return nil, badURL(raw, "the query parameter %q is not supported", k)
		}
	}
	// Split the escaped path, then unescape each segment: unescaping first
	// would turn %2F into a separator and shift the ref into the path.
	p := strings.TrimRight(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	if p == "" {
		return nil, nil
	}
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if seg == "" {
			return nil, badURL(raw, "its path has an empty segment")
		}
		if segs[i], err = url.PathUnescape(seg); err != nil || strings.Contains(segs[i], "/") {
			return nil, badURL(raw, "its path has a malformed or encoded-slash segment")
		}
	}
	return segs, nil
}

// validOwner follows GitHub's account names: letters, digits and hyphens,
// not starting with a hyphen, at most 39 characters. Underscores are
// accepted too, for Enterprise Managed User accounts (name_shortcode).
func validOwner(s string) bool {
	if s == "" || len(s) > 39 || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// validRepo follows GitHub's repository names: letters, digits, '.', '-'
// and '_', at most 100 characters, and not "." or "..".
func validRepo(s string) bool {
	if s == "" || len(s) > 100 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// validRef applies git's ref-name rules (git check-ref-format) to a single
// segment, so a name that git would refuse is refused here with a clear
// message instead of as a confusing 404 from GitHub.
func validRef(s string) bool {
	if s == "" || len(s) > 255 || s == "@" || s[0] == '-' || s[0] == '.' ||
		strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") ||
		strings.Contains(s, "..") || strings.Contains(s, "@{") {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(`~^:?*[\/`, r) {
			return false
		}
	}
	return true
}

// validRefPath accepts a full ref name, which may have several segments
// (release/1.x) when it does not come from a URL: from the API's
// default_branch, or from a caller that sets Source.Ref itself.
func validRefPath(s string) bool {
	if len(s) > 255 {
		return false
	}
	for seg := range strings.SplitSeq(s, "/") {
		if !validRef(seg) {
			return false
		}
	}
	return true
}

// escapeRef escapes a ref for a URL path, keeping its slashes, which the
// tarball endpoint and github.com tree pages both read as part of the ref.
func escapeRef(ref string) string {
	segs := strings.Split(ref, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// badURL is the EINVALID refusal of a URL. The URL is quoted (escaping
// control characters) and shortened, as it comes straight from the user.
func badURL(raw, format string, args ...any) error {
	shown := raw
	if len(shown) > 200 {
		shown = shown[:200] + "…"
	}
	why := fmt.Sprintf(format, args...)
	return &skilld.Error{
		Code:    skilld.EINVALID,
		Message: fmt.Sprintf("unsupported GitHub URL %q: %s; %s", shown, why, expectedForms),
		Details: []skilld.Detail{{Field: "url", Message: why}},
	}
}

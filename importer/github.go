// Package importer brings skills into skilld from outside sources. Today that
// is GitHub: a repository, folder or SKILL.md URL is resolved to a commit
// archive, the skill folders in it are found, and each becomes a
// pack.Package within the GitHub import limits.
//
// The archive is downloaded into memory (at most MaxArchiveSize bytes) and
// walked twice: once reading headers only, to find the skill folders, and
// once reading only the files of the folders that will be imported. The
// repository is never materialized as one package, so the memory an import
// takes is the compressed archive plus the selected skills.
package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// DefaultAPIURL is the GitHub REST API used when GitHub.APIURL is empty.
const DefaultAPIURL = "https://api.github.com"

// GitHub downloads skills from GitHub repositories. The zero value is ready
// to use for public repositories; a GitHub is safe for concurrent use as
// long as its fields are not changed.
type GitHub struct {
	// APIURL is the REST API root; "" means DefaultAPIURL.
	APIURL string
	// Token, when set, is sent as "Authorization: Bearer …" to the API host
	// only: never to hosts that GitHub redirects downloads to (codeload
	// URLs carry their own short-lived credential).
	Token string
	// HTTPClient makes the requests; nil means a client with connection,
	// header and overall timeouts that refuses connections to non-public
	// addresses on any host but APIURL's (AddressRefusedError). Its
	// CheckRedirect is not used: redirects are followed here so the token
	// never leaves the API host. A client given here makes its own
	// connections: the address check is the default client's.
	HTTPClient *http.Client
	// MaxArchiveSize caps the downloaded archive; 0 means
	// pack.GitHubMaxArchiveSize.
	MaxArchiveSize int64

	backoff time.Duration // first retry delay; 0 means defaultBackoff (tests shorten it)
}

const (
	// maxRetries is how often a 5xx or network failure is retried, with
	// exponential backoff from defaultBackoff: enough to ride out a blip,
	// short enough that a real outage is reported within seconds.
	maxRetries     = 2
	defaultBackoff = 500 * time.Millisecond
	maxRedirects   = 5
	// maxErrorBody caps how much of an error or metadata response is read.
	maxErrorBody = 64 << 10
)

// defaultClient bounds every stage of a request, so a stalled GitHub cannot
// hold an import forever even when the caller's context has no deadline.
// It is never modified after initialization.
var defaultClient = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 30 * time.Second
	t.DialContext = guardedDial
	return &http.Client{Transport: t, Timeout: 5 * time.Minute}
}()

// Fetch resolves the ref of src (src.Ref, else the repository's default
// branch, else "main" when GitHub cannot say for a reason other than 401,
// 403 or 404), downloads the archive of that ref, and returns every skill
// folder src covers, with its package, and the resolved ref.
//
// Which folders src covers: for a repository, every folder holding a
// SKILL.md (or skill.md); for a tree URL, the folder itself if it holds one,
// else every skill folder below it; for a blob URL, exactly the SKILL.md's
// folder. A SKILL.md inside another skill's folder belongs to that skill,
// except that a skill at the repository root does not swallow the others:
// its package is the repository minus their folders. Folders below the
// covered root that skillmd.SkipDir names (.git, .hg, .svn, node_modules)
// are not searched, as in `skilld validate`; hidden folders such as
// .claude/skills are. More than MaxCandidates skills is an
// ETOOLARGE error.
//
// Fetch reads every candidate's files (up to MaxCandidates × 10 MiB); a
// server importing on behalf of users should call Import, which reads only
// the selected ones.
func (g *GitHub) Fetch(ctx context.Context, src Source) ([]Candidate, string, error) {
	return g.fetch(ctx, src, func(c []Candidate) ([]Candidate, error) { return c, nil })
}

// Import is Fetch followed by Select(candidates, skillName, importAll), with
// the selection made between the two passes over the archive: only the
// chosen folders are read, and a problem in a folder that was not chosen (a
// symlink, too many files) does not fail the import.
func (g *GitHub) Import(ctx context.Context, src Source, skillName string, importAll bool) ([]Candidate, string, error) {
	return g.fetch(ctx, src, func(c []Candidate) ([]Candidate, error) { return Select(c, skillName, importAll) })
}

func (g *GitHub) fetch(ctx context.Context, src Source, pick func([]Candidate) ([]Candidate, error)) ([]Candidate, string, error) {
	if err := checkSource(src); err != nil {
		return nil, "", err
	}
	ref := src.Ref
	if ref == "" {
		var err error
		if ref, err = g.defaultBranch(ctx, src); err != nil {
			return nil, "", err
		}
	}
	archive, err := g.download(ctx, src, ref)
	if err != nil {
		return nil, ref, err
	}
	a := &repoArchive{src: src, ref: ref, data: archive}
	found, owners, err := a.findSkills(ctx)
	if err != nil {
		return nil, ref, err
	}
	chosen, err := pick(found)
	if err != nil {
		return nil, ref, err
	}
	if err := a.readSkills(ctx, owners, chosen); err != nil {
		return nil, ref, err
	}
	return chosen, ref, nil
}

// checkSource accepts a Source built by hand as ParseGitHubURL would have:
// the owner, repository and ref end up in request paths and the path in
// package paths.
func checkSource(src Source) error {
	if !validOwner(src.Owner) || !validRepo(src.Repo) {
		return skilld.Errorf(skilld.EINVALID, "invalid GitHub repository %q", src.Owner+"/"+src.Repo)
	}
	if src.Ref != "" && !validRefPath(src.Ref) {
		return skilld.Errorf(skilld.EINVALID, "invalid GitHub ref %q", src.Ref)
	}
	switch src.Kind {
	case "", KindRepo, KindTree, KindBlob:
	default:
		return skilld.Errorf(skilld.EINVALID, "invalid GitHub source kind %q", src.Kind)
	}
	if src.Path != "" {
		if err := pack.CheckPath(src.Path); err != nil {
			return skilld.Errorf(skilld.EINVALID, "invalid folder in %s/%s: %s", src.Owner, src.Repo, skilld.ErrorMessage(err))
		}
	}
	return nil
}

func (g *GitHub) apiURL() string {
	if g.APIURL == "" {
		return DefaultAPIURL
	}
	return strings.TrimRight(g.APIURL, "/")
}

// defaultBranch asks GitHub for the repository's default branch. Only an
// answer about access (401, 403, 404, rate limits) is final: any other
// failure falls back to "main", since the archive request that follows
// fails on its own, with its own error, if that guess is wrong.
func (g *GitHub) defaultBranch(ctx context.Context, src Source) (string, error) {
	var branch string
	req := request{
		url:      g.apiURL() + "/repos/" + src.Owner + "/" + src.Repo,
		repo:     src.Owner + "/" + src.Repo,
		notFound: "repository " + src.Owner + "/" + src.Repo + " not found or not visible with the configured token",
	}
	err := g.get(ctx, req, func(resp *http.Response) error {
		var meta struct {
			DefaultBranch string `json:"default_branch"`
		}
		if json.NewDecoder(io.LimitReader(resp.Body, maxErrorBody)).Decode(&meta) == nil && validRefPath(meta.DefaultBranch) {
			branch = meta.DefaultBranch
		}
		return nil
	})
	switch skilld.ErrorCode(err) {
	case skilld.EUNAUTHORIZED, skilld.EFORBIDDEN, skilld.ENOTFOUND, skilld.ERATELIMITED:
		return "", err
	}
	if ctx.Err() != nil {
		return "", canceled(req.repo, ctx.Err())
	}
	if branch == "" {
		branch = "main"
	}
	return branch, nil
}

// download fetches the archive of ref into memory, refusing more than
// MaxArchiveSize bytes whatever the response claims.
func (g *GitHub) download(ctx context.Context, src Source, ref string) ([]byte, error) {
	limit := g.MaxArchiveSize
	if limit <= 0 {
		limit = pack.GitHubMaxArchiveSize
	}
	repo := src.Owner + "/" + src.Repo
	tooLarge := func() error {
		return skilld.Errorf(skilld.ETOOLARGE, "the archive of %s at %q is over the %s limit for GitHub imports",
			repo, ref, sizeLimit(limit))
	}
	req := request{
		url:  g.apiURL() + "/repos/" + repo + "/tarball/" + escapeRef(ref),
		repo: repo,
		notFound: "repository " + repo + " not found or not visible with the configured token, " +
			"or it has no branch, tag or commit " + quoteRef(ref),
	}
	var data []byte
	err := g.get(ctx, req, func(resp *http.Response) error {
		if resp.ContentLength > limit {
			return tooLarge()
		}
		var buf bytes.Buffer
		if resp.ContentLength > 0 {
			// Room for the declared size and the probe for one more byte,
			// so the buffer never doubles on a well-behaved response.
			buf.Grow(int(resp.ContentLength) + bytes.MinRead)
		}
		n, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1))
		if err != nil {
			if ctx.Err() != nil {
				return canceled(repo, ctx.Err())
			}
			return &transient{unavailable(repo, "the download of the archive was interrupted", err)}
		}
		if n > limit {
			return tooLarge()
		}
		data = buf.Bytes()
		return nil
	})
	return data, err
}

// request is one GET to GitHub, with what its errors should say.
type request struct {
	url      string
	repo     string // "owner/repo", for messages
	notFound string // message for a 404
}

// transient marks a failure worth retrying (5xx, network); err is the typed
// error reported if the retries run out.
type transient struct{ err error }

func (t *transient) Error() string { return t.err.Error() }

// get performs req, retrying transient failures with backoff, and hands a
// 2xx response to read (which may itself return a *transient).
func (g *GitHub) get(ctx context.Context, req request, read func(*http.Response) error) error {
	delay := g.backoff
	if delay <= 0 {
		delay = defaultBackoff
	}
	for attempt := 0; ; attempt++ {
		err := g.once(ctx, req, read)
		var t *transient
		if !errors.As(err, &t) {
			return err
		}
		if attempt == maxRetries {
			return t.err
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return canceled(req.repo, ctx.Err())
		case <-timer.C:
		}
		delay *= 2
	}
}

func (g *GitHub) once(ctx context.Context, req request, read func(*http.Response) error) error {
	resp, err := g.follow(ctx, req.url)
	if err != nil {
		if ctx.Err() != nil {
			return canceled(req.repo, ctx.Err())
		}
		// Not worth a retry: the address will not change its nature.
		if refused, ok := errors.AsType[*AddressRefusedError](err); ok {
			return &skilld.Error{Code: skilld.EFORBIDDEN, Message: "importing " + req.repo + ": " + refused.Error(), Err: refused}
		}
		what := "GitHub could not be reached"
		if cause := netCause(err); cause != "" {
			what += " (" + cause + ")"
		}
		return &transient{unavailable(req.repo, what, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return read(resp)
	}
	return g.statusError(resp, req)
}

// follow GETs target and follows redirects itself rather than through the
// client, so that the token goes to the API host and nowhere else: Go's
// client would forward it to the API's host name on any port and to its
// subdomains, and a redirect target may be anything.
func (g *GitHub) follow(ctx context.Context, target string) (*http.Response, error) {
	api, err := url.Parse(g.apiURL())
	if err != nil {
		return nil, err
	}
	c := defaultClient
	if g.HTTPClient != nil {
		c = g.HTTPClient
	}
	noRedirects := *c
	noRedirects.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/vnd.github+json")
		req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
		req.Header.Set("User-Agent", "skilld")
		if g.Token != "" && sameOrigin(req.URL, api) {
			req.Header.Set("Authorization", "Bearer "+g.Token)
		}
		req = req.WithContext(context.WithValue(ctx, dialPolicyKey{}, policyFor(api, req, hop > 0)))
		resp, err := noRedirects.Do(req)
		if err != nil {
			return nil, redact(err)
		}
		switch resp.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
			http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		default:
			return resp, nil
		}
		loc, err := resp.Location()
		drain(resp)
		if err != nil || (loc.Scheme != "https" && loc.Scheme != "http") {
			return nil, errors.New("GitHub answered a redirect without a usable Location")
		}
		if hop == maxRedirects {
			return nil, errors.New("GitHub redirected too many times")
		}
		target = loc.String()
	}
}

// sameOrigin compares scheme and host:port exactly, so neither another
// port on the same machine nor a plain-http downgrade receives the token.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

// drain lets the connection be reused after a response we do not read.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

// redact removes the query string from the URL in a client error: download
// redirects carry a short-lived token there, and errors end up in logs.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.RawQuery, u.User = "", nil
			return &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
		}
	}
	return err
}

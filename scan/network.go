package scan

import (
	"bytes"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/permissions"
)

// DeclarationFile is the file at a package's root where a skill declares
// what it needs; the scanner reads its network list.
const DeclarationFile = permissions.File

// declaration is what the scanner reads of skilld.yaml, through the one
// parser of it: the valid entries even when some are not.
type declaration struct {
	present bool
	err     error
	req     permissions.Request
}

func readDeclaration(pkg *pack.Package) declaration {
	req, present, err := permissions.FromPackage(pkg)
	return declaration{present: present, err: err, req: req}
}

// allows reports whether the declaration covers host (with port, when the
// URL named one).
func (d declaration) allows(host, port string) bool { return d.req.Allows(host, port) }

func declarationCheck(u *unit, f pack.File, _ bool) []skilld.Finding {
	if f.Path != DeclarationFile || u.decl.err == nil {
		return nil
	}
	return []skilld.Finding{{Message: "skilld.yaml is not a valid declaration: " + firstLine(u.decl.err.Error())}}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Script files: by extension, or by an execute bit or a #! line.
var scriptExt = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "ksh": true, "fish": true, "py": true, "js": true, "mjs": true, "cjs": true,
	"ts": true, "mts": true, "rb": true, "pl": true, "ps1": true, "psm1": true, "php": true, "go": true, "lua": true, "r": true,
}

func isScript(f pack.File) bool {
	return scriptExt[ext(f.Path)] || f.Exec || bytes.HasPrefix(f.Data, []byte("#!"))
}

// networkPatterns are compiled on first use, as the rules are: every
// command would otherwise compile them at start.
var networkPatterns = sync.OnceValue(func() *netPatterns {
	return &netPatterns{
		call:    regexp.MustCompile(`(?i)\b(curl|wget|requests\.(get|post|put|patch|delete|head|request|session)|urllib|urlopen|http\.client|https?connection|httpx|aiohttp|fetch\s*\(|axios|net/http|http\.(get|post|newrequest)|invoke-webrequest|invoke-restmethod|iwr|irm|webclient|socket\.create_connection|open-uri|net::http|lwp::|file_get_contents\s*\(\s*['"]https?:)\b`),
		hosts:   []*regexp.Regexp{regexp.MustCompile(`(?i)\b(?:https?|wss?|ftp)://([a-z0-9._~%-]+|\[[0-9a-f:]+\])(?::(\d{1,5}))?`), regexp.MustCompile(`(?i)https?connection\s*\(\s*['"]([a-z0-9.-]+)(?::(\d{1,5}))?['"]`)},
		comment: regexp.MustCompile(`^\s*(#|//|/?\*|--|<#|')`),
	}
})

// netPatterns are the patterns of the network checks.
type netPatterns struct {
	// call is what makes a script a network client: a tool or library
	// that fetches (a URL in a script that never fetches is
	// documentation, a namespace or an identifier).
	call *regexp.Regexp
	// hosts find a host and port: in a URL, or given to an HTTP
	// connection class.
	hosts   []*regexp.Regexp
	comment *regexp.Regexp
}

// ignoredHosts never count as network access: loopback and the names
// reserved for examples (RFC 2606, RFC 6761), and XML namespace owners,
// whose URLs in office-file and SVG code are names, not requests.
func ignoredHost(h string) bool {
	switch h {
	case "localhost", "0.0.0.0", "::1", "[::1]", "schemas.openxmlformats.org", "schemas.microsoft.com", "www.w3.org", "w3.org",
		"purl.org", "ns.adobe.com", "xmlns.com", "schemas.xmlsoap.org", "json-schema.org", "example.com", "example.org", "example.net":
		return true
	}
	if ip := net.ParseIP(strings.Trim(h, "[]")); ip != nil {
		return ip.IsLoopback() || ip.IsUnspecified()
	}
	for _, s := range []string{".example.com", ".example.org", ".example.net", ".example", ".test", ".invalid", ".localhost", ".local"} {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	// A bare word is a placeholder or a local name; an empty label
	// ("https://..." in a usage line) is no host at all.
	return !strings.Contains(h, ".") || slices.Contains(strings.Split(h, "."), "")
}

// networkCheck reports, once per script and host, the hosts a network
// client script names: with declared true the hosts skilld.yaml does not
// cover, when there is one; with declared false every host, when there
// is none.
func networkCheck(declared bool) check {
	return func(u *unit, f pack.File, text bool) []skilld.Finding {
		// The client pattern over the whole file is the slow part: asked last,
		// of the few scripts that name a URL at all.
		if !text || !isScript(f) || declared != u.decl.present ||
			!bytes.Contains(f.Data, []byte("://")) && !bytes.Contains(bytes.ToLower(f.Data), []byte("connection(")) {
			return nil
		}
		pat := networkPatterns()
		if !pat.call.Match(f.Data) {
			return nil
		}
		seen := map[string]bool{}
		var out []skilld.Finding
		for n, line := range lines(f.Data) {
			if len(line) > maxLineScan {
				line = line[:maxLineScan]
			}
			if pat.comment.Match(line) {
				continue
			}
			for _, re := range pat.hosts {
				for _, m := range re.FindAllSubmatchIndex(line, -1) {
					host := strings.TrimSuffix(strings.ToLower(string(line[m[2]:m[3]])), ".")
					port := ""
					if m[4] >= 0 {
						port = string(line[m[4]:m[5]])
					}
					if ignoredHost(host) || seen[host+":"+port] || u.decl.allows(host, port) {
						continue
					}
					seen[host+":"+port] = true
					name := host
					if port != "" {
						name += ":" + port
					}
					msg := fmt.Sprintf("calls %s, which skilld.yaml does not declare under network", name)
					if !declared {
						msg = fmt.Sprintf("calls %s, and the package declares no network access (no skilld.yaml)", name)
					}
					out = append(out, skilld.Finding{Line: n, Message: msg, Excerpt: excerpt(line, m[0], m[1])})
				}
			}
		}
		return out
	}
}

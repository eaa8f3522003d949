// Package permissions reads what a skill package asks for beyond its files
// (network hosts, secrets, tools) from skilld.yaml at the package root, and
// decides whether an approved request covers a requested one. It is the one
// parser of skilld.yaml: the scanner reads the network list through it.
package permissions

import (
	"bytes"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
)

// File is the declaration file at a package's root.
const File = "skilld.yaml"

// Fields of skilld.yaml, named in error details.
const (
	FieldNetwork = "network"
	FieldSecrets = "secrets"
	FieldTools   = "tools"
)

// MaxEntries bounds each list, so a declaration stays something a person
// can read before approving it.
const MaxEntries = 256

// Request is what a package asks for. Network entries are lowercase
// "host", "host:port" or "*.domain[:port]"; secrets are environment
// variable names; tools are names the package's instructions use.
type Request struct {
	Network []string `json:"network"`
	Secrets []string `json:"secrets"`
	Tools   []string `json:"tools,omitempty"`
}

// Empty reports whether the request asks for nothing.
func (r Request) Empty() bool {
	return len(r.Network) == 0 && len(r.Secrets) == 0 && len(r.Tools) == 0
}

// Normalized returns r with nil lists as empty ones, so its JSON shows
// [] rather than null.
func (r Request) Normalized() Request {
	if r.Network == nil {
		r.Network = []string{}
	}
	if r.Secrets == nil {
		r.Secrets = []string{}
	}
	return r
}

var secretName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`) })

// FromPackage reads the package's declaration. present is false when the
// package has no skilld.yaml (it then asks for nothing).
func FromPackage(pkg *pack.Package) (req Request, present bool, err error) {
	f, ok := pkg.File(File)
	if !ok {
		return Request{}, false, nil
	}
	req, err = Parse(f.Data)
	return req, true, err
}

// Parse reads a skilld.yaml document. Unknown keys, wrong types, malformed
// hosts, secret names and duplicates are an EINVALID *skilld.Error with one
// detail per problem, each naming its field ("network[2]"). The returned
// Request holds the valid entries even with an error, for the scanner,
// which checks a package against what it declares however badly.
func Parse(data []byte) (Request, error) {
	var req Request
	var details []skilld.Detail
	fail := func(field, format string, args ...any) {
		details = append(details, skilld.Detail{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	var doc yaml.MapSlice
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
			return req, &skilld.Error{Code: skilld.EINVALID, Message: File + " is not a YAML mapping of network, secrets and tools: " + firstLine(err.Error()),
				Details: []skilld.Detail{{Field: File, Message: firstLine(err.Error())}}, Err: err}
		}
	}
	for _, item := range doc {
		key, ok := item.Key.(string)
		if !ok {
			fail(File, "key %v is not a string", item.Key)
			continue
		}
		var check func(string) (string, error)
		var dst *[]string
		switch key {
		case FieldNetwork:
			check, dst = checkHost, &req.Network
		case FieldSecrets:
			check, dst = checkSecret, &req.Secrets
		case FieldTools:
			check, dst = checkTool, &req.Tools
		default:
			fail(key, "Unexpected field '%s' (allowed: network, secrets, tools)", key)
			continue
		}
		if item.Value == nil {
			continue
		}
		list, ok := item.Value.([]any)
		if !ok {
			fail(key, "Field '%s' must be a list of strings", key)
			continue
		}
		if len(list) > MaxEntries {
			fail(key, "Field '%s' has %d entries, more than %d", key, len(list), MaxEntries)
			continue
		}
		for i, v := range list {
			field := key + "[" + strconv.Itoa(i) + "]"
			s, ok := v.(string)
			if !ok {
				fail(field, "Entry must be a string, not %v", v)
				continue
			}
			norm, err := check(s)
			if err != nil {
				fail(field, "%v", err)
				continue
			}
			if slices.Contains(*dst, norm) {
				fail(field, "%q is listed twice", norm)
				continue
			}
			*dst = append(*dst, norm)
		}
	}
	if len(details) > 0 {
		msg := File + ": " + details[0].Field + ": " + details[0].Message
		if len(details) > 1 {
			msg += fmt.Sprintf(" (and %d more problems)", len(details)-1)
		}
		return req, &skilld.Error{Code: skilld.EINVALID, Message: msg, Details: details}
	}
	return req, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// hostLabel is compiled on first use: a counted repetition compiles to a
// large program, which every command would otherwise build at start.
var hostLabel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`) })

// checkHost accepts "host", "host:port", "*.domain", "*.domain:port", an
// IPv4 address or a bracketed IPv6 one, with an optional port, and returns
// it lowercased.
func checkHost(s string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(s))
	host, port := h, ""
	switch {
	case strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]"):
		host = h[1 : len(h)-1]
	case strings.HasPrefix(h, "[") || strings.Count(h, ":") == 1:
		hh, pp, err := net.SplitHostPort(h)
		if err != nil {
			return "", fmt.Errorf("%q is not a host or host:port", s)
		}
		host, port = hh, pp
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return "", fmt.Errorf("%q has port %q, not a number from 1 to 65535", s, port)
		}
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.To4() == nil && !strings.HasPrefix(h, "[") {
			return "", fmt.Errorf("%q: write an IPv6 address in brackets, [%s]", s, host)
		}
		return h, nil
	}
	if strings.Contains(host, ":") {
		return "", fmt.Errorf("%q is not a host or host:port", s)
	}
	name := strings.TrimPrefix(host, "*.")
	if len(name) == 0 || len(name) > 253 {
		return "", fmt.Errorf("%q is not a host name", s)
	}
	for _, l := range strings.Split(name, ".") {
		if !hostLabel().MatchString(l) {
			return "", fmt.Errorf("%q is not a host name (label %q)", s, l)
		}
	}
	if name != host && !strings.Contains(name, ".") {
		return "", fmt.Errorf("%q: a wildcard must name a domain with a dot, like *.example.com", s)
	}
	return h, nil
}

// CheckHost checks a network entry as skilld.yaml writes it, and returns
// it lowercased.
func CheckHost(s string) (string, error) { return checkHost(s) }

// CheckSecretName checks a secret's name: an environment variable name,
// as skilld.yaml's secrets list them.
func CheckSecretName(s string) error {
	_, err := checkSecret(s)
	return err
}

func checkSecret(s string) (string, error) {
	if len(s) > 128 || !secretName().MatchString(s) {
		return "", fmt.Errorf("%q is not a secret name (an environment variable name: A-Z, 0-9 and _, not starting with a digit)", s)
	}
	if sandbox.LoaderVariable(s) || sandbox.LocaleVariable(s) {
		return "", fmt.Errorf("%q cannot be a secret: the variable changes how programs load or which locale they read, before a script's first line", s)
	}
	return s, nil
}

// toolName is compiled on first use: a counted repetition compiles to a
// large program, which every command would otherwise build at start.
var toolName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.:-]{0,127}$`) })

func checkTool(s string) (string, error) {
	if !toolName().MatchString(s) {
		return "", fmt.Errorf("%q is not a tool name (a letter, then letters, digits, _ . : -)", s)
	}
	return s, nil
}

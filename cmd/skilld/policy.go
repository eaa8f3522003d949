package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
)

// policyCommands is the "skilld policy" group.
func policyCommands() []command {
	return []command{
		{"get", "show the workspace's install rules and tool policy", runPolicyGet},
		{"set", "replace them with a JSON document (admins)", runPolicySet},
	}
}

func runPolicyGet(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "policy get", "")
	if code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	p, ok := call(ctx, c, service.OpPolicyGet, service.GetPolicyParams{})
	if !ok {
		return exitFailure
	}
	return c.printPolicy(p)
}

func (c *apiCmd) printPolicy(p *skilld.Policy) int {
	return c.output(p, func(w io.Writer) {
		fmt.Fprintln(w, "install rules (the first that matches decides; none matching allows):")
		if len(p.InstallRules) == 0 {
			fmt.Fprintln(w, "  none")
		}
		for i, r := range p.InstallRules {
			reg := "every registry"
			if r.Registry != "" {
				reg = "registry " + r.Registry
			}
			trust := ""
			if r.MinTrust != "" {
				trust = "trust below " + string(r.MinTrust)
				if r.Effect == skilld.EffectAllow {
					trust = "trust " + string(r.MinTrust) + " or higher"
				}
			}
			row(w, fmt.Sprintf("  %d", i+1), r.Effect, reg, trust)
		}
		fmt.Fprintln(w, "tool policy:")
		row(w, "  denied", strings.Join(p.Tools.Denied, " "))
		row(w, "  allowed", strings.Join(p.Tools.Allowed, " "))
		row(w, "  require approval", strings.Join(p.Tools.RequireApproval, " "))
	})
}

func runPolicySet(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "policy set", "FILE | - | JSON\n\n"+
		"Replaces the policy with a JSON document, read from FILE, from standard input\n"+
		"(-) or given inline, such as:\n"+
		`  {"install_rules":[{"effect":"deny","registry":"acme"},{"effect":"deny","min_trust":"verified"}],`+"\n"+
		`   "tools":{"denied":["shell*"]}}`)
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	var data []byte
	var err error
	switch a := c.args[0]; {
	case strings.HasPrefix(strings.TrimSpace(a), "{"):
		data = []byte(a)
	case a == "-":
		if c.e.stdin != nil {
			data, err = io.ReadAll(c.e.stdin)
		}
	default:
		data, err = os.ReadFile(a)
	}
	if err != nil {
		return c.fail(err)
	}
	var p service.PutPolicyParams
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return usageErrorf(c.fs, "the policy is not a valid JSON document: %v", err)
	}
	out, ok := call(ctx, c, service.OpPolicyPut, p)
	if !ok {
		return exitFailure
	}
	return c.printPolicy(out)
}

package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/skilld/skilld/scan"
	"github.com/skilld/skilld/service"
)

// runSkillsFindings prints what the package scanner found in a skill
// version (skills.findings).
func runSkillsFindings(ctx context.Context, e *env, args []string) int {
	var p service.SkillFindingsParams
	c, asSARIF, code, ok := findingsCmd(e, "skills findings", "ID", "version to show (default: the current one)", &p.Version, args)
	if !ok {
		return code
	}
	p.ID = c.args[0]
	found, ok := call(ctx, c, service.OpSkillsFindings, p)
	if !ok {
		return exitFailure
	}
	return printFindings(c, found, asSARIF)
}

// runCatalogFindings prints what the package scanner found in a catalog
// item version (catalog.items.findings).
func runCatalogFindings(ctx context.Context, e *env, args []string) int {
	var p service.CatalogItemFindingsParams
	c, asSARIF, code, ok := findingsCmd(e, "catalog findings", "REGISTRY/NAME", "item version to show (default: the latest)", &p.Version, args)
	if !ok {
		return code
	}
	var cut bool
	if p.Registry, p.Item, cut = strings.Cut(c.args[0], "/"); !cut || p.Registry == "" || p.Item == "" {
		return usageErrorf(c.fs, "%q is not REGISTRY/NAME", c.args[0])
	}
	found, ok := call(ctx, c, service.OpCatalogItemsFindings, p)
	if !ok {
		return exitFailure
	}
	return printFindings(c, found, asSARIF)
}

// findingsCmd parses the command line of a findings command: one
// argument, --version into version, and --json or --sarif (not both).
func findingsCmd(e *env, name, arg, versionHelp string, version *int, args []string) (c *apiCmd, sarif bool, code int, ok bool) {
	c = newAPICmd(e, name, arg+" [--version N] [--json | --sarif]")
	c.fs.IntVar(version, "version", 0, versionHelp)
	asSARIF := c.fs.Bool("sarif", false, "print a SARIF 2.1.0 log, for code-scanning tools")
	if code, ok := c.parse(args, 1, 1); !ok {
		return nil, false, code, false
	}
	if c.json && *asSARIF {
		return nil, false, usageErrorf(c.fs, "--json and --sarif cannot be used together"), false
	}
	return c, *asSARIF, 0, true
}

// printFindings prints findings as a table, the server's JSON or SARIF
// (whose rules are this binary's scanner's, plus any the server's
// findings name that it lacks).
func printFindings(c *apiCmd, found *service.Findings, asSARIF bool) int {
	if asSARIF {
		if err := scan.Default().WriteSARIF(c.e.stdout, strings.Fields(versionString())[1], found.Findings); err != nil {
			return c.fail(err)
		}
		return exitOK
	}
	return c.output(found, func(w io.Writer) {
		if len(found.Findings) == 0 {
			fmt.Fprintf(w, "No findings in %s (rules version %d)\n", shortDigest(found.Digest), found.RulesVersion)
			return
		}
		row(w, "SEVERITY", "RULE", "WHERE", "MESSAGE")
		for _, f := range found.Findings {
			where := f.File
			if f.Line > 0 {
				where += fmt.Sprintf(":%d", f.Line)
			}
			row(w, f.Severity, f.Rule, where, short(f.Message, 80))
			if f.Excerpt != "" {
				row(w, "", "", "", "  "+short(f.Excerpt, 80))
			}
		}
		fmt.Fprintf(w, "\n%d findings in %s (rules version %d)\n", len(found.Findings), shortDigest(found.Digest), found.RulesVersion)
	})
}

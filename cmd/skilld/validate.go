package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/skillmd"
)

// validation is the verdict on one skill, in the shape `--json` prints.
type validation struct {
	Path     string          `json:"path"`
	Name     string          `json:"name"`
	Digest   string          `json:"digest"`
	Valid    bool            `json:"valid"`
	Errors   []skilld.Detail `json:"errors"`
	Warnings []skilld.Detail `json:"warnings"`
}

func runValidate(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "validate", "[--json] [--lenient] PATH...\n\n"+
		"PATH is a skill directory, a SKILL.md file, a .zip/.skill/.tar/.tar.gz archive,\n"+
		"or a folder searched recursively for skills. Exit status: 0 when every skill\n"+
		"is valid, 1 when any is invalid, 2 on usage errors.")
	asJSON := fs.Bool("json", false, "print one JSON array of results")
	lenient := fs.Bool("lenient", false, "report unknown frontmatter keys as warnings instead of errors")
	paths, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(paths) == 0 {
		return usageErrorf(fs, "no PATH given")
	}
	var sources []source
	for _, p := range paths {
		sources = append(sources, resolveSources(ctx, p)...)
	}
	// A path that is not there is a mistake on the command line, not a
	// skill that failed its checks.
	if s, ok := missingPath(sources); ok {
		return usageErrorf(fs, "%s does not exist", s.path)
	}
	opts := skillmd.Options{Lenient: *lenient}
	var results []validation
	for _, rs := range forEach(ctx, sources, func(ctx context.Context, s source) []validation {
		return validateSources(ctx, s, opts)
	}) {
		results = append(results, rs...)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			fmt.Fprintf(e.stderr, "skilld validate: %v\n", err)
			return exitFailure
		}
	} else {
		printValidations(e.stdout, results)
	}
	for _, r := range results {
		if !r.Valid {
			return exitFailure
		}
	}
	return exitOK
}

// validateSource reads a skill's package and checks its SKILL.md.
func validateSource(ctx context.Context, s source, opts skillmd.Options) validation {
	v := validation{Path: s.path, Errors: []skilld.Detail{}, Warnings: []skilld.Detail{}}
	if s.err != nil {
		v.Errors = append(v.Errors, skilld.Detail{Field: "path", Message: errorText(s.err)})
		return v
	}
	p, dir, err := s.load(ctx)
	if err != nil {
		v.Errors = append(v.Errors, skilld.Detail{Field: "package", Message: errorText(err)})
		return v
	}
	return validatePackage(v, p, dir, opts)
}

// validateSources is validateSource, except that an archive holding
// several skills and none at its root is validated skill by skill, as a
// folder holding them is: each as "archive:folder", checked against its
// folder's name.
func validateSources(ctx context.Context, s source, opts skillmd.Options) []validation {
	if s.err != nil || !s.archive {
		return []validation{validateSource(ctx, s, opts)}
	}
	newValidation := func(path string) validation {
		return validation{Path: path, Errors: []skilld.Detail{}, Warnings: []skilld.Detail{}}
	}
	p, dir, err := s.load(ctx)
	if err != nil {
		v := newValidation(s.path)
		v.Errors = append(v.Errors, skilld.Detail{Field: "package", Message: errorText(err)})
		return []validation{v}
	}
	dirs := p.SkillDirs()
	if len(dirs) == 0 || dirs[0] == "." {
		return []validation{validatePackage(newValidation(s.path), p, dir, opts)}
	}
	out := make([]validation, len(dirs))
	for i, d := range dirs {
		v := newValidation(s.path + ":" + d)
		sub, err := p.Sub(d)
		if err != nil {
			v.Errors = append(v.Errors, skilld.Detail{Field: "package", Message: errorText(err)})
			out[i] = v
			continue
		}
		out[i] = validatePackage(v, sub, sub.TopDir(), opts)
	}
	return out
}

// validatePackage checks a package's SKILL.md into v; dir is the folder
// name the skill's name must match ("" for none).
func validatePackage(v validation, p *pack.Package, dir string, opts skillmd.Options) validation {
	v.Digest = p.Digest()
	opts.Dir = dir
	r := checkPackage(p, opts)
	if r.Skill != nil {
		v.Name = r.Skill.Name
	}
	v.Errors = append(v.Errors, r.Errors...)
	v.Warnings = append(v.Warnings, r.Warnings...)
	v.Valid = len(v.Errors) == 0
	return v
}

// checkPackage checks the root SKILL.md of a package.
func checkPackage(p *pack.Package, opts skillmd.Options) *skillmd.Report {
	name := skillmd.Filename(func(n string) bool { _, ok := p.File(n); return ok })
	if name == "" {
		return &skillmd.Report{Errors: []skilld.Detail{{Field: skillmd.FieldFile, Message: "Missing required file: SKILL.md"}}}
	}
	f, _ := p.File(name)
	return skillmd.Check(f.Data, opts)
}

// errorText is the message of an error for a person at a terminal: typed
// errors carry their own, anything else is shown as is.
func errorText(err error) string {
	if skilld.ErrorCode(err) == skilld.EINTERNAL {
		return err.Error()
	}
	return skilld.ErrorMessage(err)
}

func printValidations(w io.Writer, results []validation) {
	invalid := 0
	for _, r := range results {
		status := "valid  "
		if !r.Valid {
			status = "INVALID"
			invalid++
		}
		fmt.Fprintf(w, "%s  %s", status, r.Path)
		if r.Name != "" {
			fmt.Fprintf(w, "  (%s)", r.Name)
		}
		fmt.Fprintln(w)
		for _, d := range r.Errors {
			fmt.Fprintf(w, "    error: %s: %s\n", d.Field, d.Message)
		}
		for _, d := range r.Warnings {
			fmt.Fprintf(w, "    warning: %s: %s\n", d.Field, d.Message)
		}
	}
	noun := "skills"
	if len(results) == 1 {
		noun = "skill"
	}
	fmt.Fprintf(w, "%d %s checked: %d valid, %d invalid\n", len(results), noun, len(results)-invalid, invalid)
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

// newFlags returns a flag set that reports errors instead of exiting, with a
// usage line naming the command.
func newFlags(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: skilld %s %s\n", name, synopsis)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(fs.Output(), "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseArgs parses flags wherever they appear among the arguments, so
// "skilld validate DIR --json" works as well as "skilld validate --json DIR";
// a lone "--" ends flag parsing. When it returns ok false, the flag package
// has already printed what was wrong (or the help text) and code is the exit
// code to return.
func parseArgs(fs *flag.FlagSet, args []string) (positional []string, code int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK, false
			}
			return nil, exitUsage, false
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, exitOK, true
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), exitOK, true
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// usageErrorf prints a usage error and the command's usage and returns the
// usage exit code.
func usageErrorf(fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(fs.Output(), "skilld %s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
	fs.Usage()
	return exitUsage
}

// secretVar defines a string flag that may carry a secret (an API token, a
// database URL with a password), defaulting to the environment variable
// env. Help shows only whether env is set, never its value: help text and
// usage errors end up in terminals, logs and bug reports.
func secretVar(fs *flag.FlagSet, p *string, name, env, usage string) {
	*p = os.Getenv(env)
	state := "unset"
	if *p != "" {
		state = "set"
	}
	fs.Var(secretValue{p}, name, fmt.Sprintf("%s (env %s, %s)", usage, env, state))
}

// secretValue is a flag.Value whose String is always empty, so the flag
// package never prints it as a default.
type secretValue struct{ p *string }

func (v secretValue) String() string     { return "" }
func (v secretValue) Set(s string) error { *v.p = s; return nil }

// envFlags sets flags from the environment variables named for them, so
// that a deployment sets them once; a command-line flag still wins, being
// parsed after. It returns what was wrong with a variable, naming it.
func envFlags(fs *flag.FlagSet, vars map[string]string) error {
	var errs []error
	for name, env := range vars {
		if v := os.Getenv(env); v != "" {
			if err := fs.Set(name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %v", env, v, err))
			}
		}
	}
	return errors.Join(errs...)
}

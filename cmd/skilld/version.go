package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// buildVersion is set at link time (-ldflags "-X main.buildVersion=v1.2.3")
// by release builds; other builds report what the Go toolchain recorded.
var buildVersion string

func versionString() string {
	v := buildVersion
	info, ok := debug.ReadBuildInfo()
	if v == "" && ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	if v == "" {
		v = "devel"
	}
	if ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += "+" + s.Value[:12]
			}
		}
	}
	return fmt.Sprintf("skilld %s (%s, %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func runVersion(_ context.Context, e *env, args []string) int {
	fs := newFlags(e, "version", "")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErrorf(fs, "unexpected argument %q", pos[0])
	}
	fmt.Fprintln(e.stdout, versionString())
	return exitOK
}

package sandbox

import (
	"path"
	"strings"

	"github.com/skilld/skilld"
)

// loaderVariables change how a program is loaded or how the C library
// behaves before the program's first line runs: the dynamic linker's
// search paths, preloads and audit modules, the C library's tunables and
// allocator, its locale, character-set and resolver files. A command runs
// unprivileged from its first instruction whatever they say, but the
// variables have no business in an agent's settings: refusing them keeps a
// tenant's value from ever steering code that runs before its own. The
// list is glibc's own list of variables it ignores in set-uid programs,
// plus every LD_* and MALLOC_* name and bash's BASH_ENV (a file every
// bash script runs first).
var loaderVariables = map[string]bool{
	"GCONV_PATH": true, "GETCONF_DIR": true, "GLIBC_TUNABLES": true, "HOSTALIASES": true,
	"LOCALDOMAIN": true, "LOCPATH": true, "NIS_PATH": true, "NLSPATH": true,
	"RESOLV_HOST_CONF": true, "RES_OPTIONS": true, "TZDIR": true, "BASH_ENV": true,
}

// loaderPrefixes are prefixes of refused names: the dynamic linker's LD_*
// and the allocator's MALLOC_*.
var loaderPrefixes = []string{"LD_", "MALLOC_"}

// LoaderVariable reports whether name is one CheckEnv refuses because it
// changes how programs load or start.
func LoaderVariable(name string) bool {
	if loaderVariables[name] {
		return true
	}
	for _, p := range loaderPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// CheckEnv checks "NAME=value" pairs for CreateParams.Env: a portable
// name, no NUL byte, not a variable that changes how programs load or
// start (LoaderVariable), and a TMPDIR inside the sandbox's own /tmp or
// /workspace. The error names the variable.
func CheckEnv(env []string) error {
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		switch {
		case !ok || !EnvName(name) || strings.IndexByte(kv, 0) >= 0:
			return skilld.Errorf(skilld.EINVALID, "environment entry %q must be NAME=value with a name of letters, digits and '_' not starting with a digit", kv)
		case LoaderVariable(name):
			return skilld.Errorf(skilld.EINVALID, "environment variable %s is not allowed: it changes how programs are loaded or how the C library starts, before a script's first line (refused: LD_*, MALLOC_*, GLIBC_TUNABLES, GCONV_PATH, BASH_ENV and the others docs/SANDBOX.md lists)", name)
		case name == "TMPDIR" && !underSandboxTmp(value):
			return skilld.Errorf(skilld.EINVALID, "environment variable TMPDIR=%q must be /tmp, %s or a folder under them, the only writable places in the sandbox", value, Workdir)
		}
	}
	return nil
}

// CheckExecEnv checks ExecParams.Env: CheckEnv's rules, and none of the
// variables that choose the C library's locale or time zone (LANG,
// LANGUAGE, LC_*, TZ). A provider hands these variables to the process
// that starts the sandbox, which reads its locale from them before any
// isolation holds.
func CheckExecEnv(env []string) error {
	if err := CheckEnv(env); err != nil {
		return err
	}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if LocaleVariable(name) {
			return skilld.Errorf(skilld.EINVALID, "environment variable %s cannot be given to one command: it sets the locale or time zone of the programs that start the sandbox; set it in the agent's sandbox environment instead", name)
		}
	}
	return nil
}

// LocaleVariable reports whether name chooses the C library's locale or
// time zone.
func LocaleVariable(name string) bool {
	return name == "LANG" || name == "LANGUAGE" || name == "TZ" || strings.HasPrefix(name, "LC_")
}

func underSandboxTmp(p string) bool {
	c := path.Clean(p)
	return path.IsAbs(p) && (c == "/tmp" || strings.HasPrefix(c, "/tmp/") || c == Workdir || strings.HasPrefix(c, Workdir+"/"))
}

// EnvName reports whether name is a portable environment variable name.
func EnvName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// BaseEnv is the environment every command starts from.
func BaseEnv() []string {
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + Workdir, "TMPDIR=/tmp", "LANG=C.UTF-8", "USER=sandbox"}
}

// MergeEnv returns base with extra applied: a name in extra replaces the
// same name in base.
func MergeEnv(base, extra []string) []string {
	out := make([]string, 0, len(base)+len(extra))
	seen := map[string]int{}
	for _, kv := range append(append([]string{}, base...), extra...) {
		name, _, _ := strings.Cut(kv, "=")
		if i, ok := seen[name]; ok {
			out[i] = kv
			continue
		}
		seen[name] = len(out)
		out = append(out, kv)
	}
	return out
}

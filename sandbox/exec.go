package sandbox

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/skilld/skilld"
)

// Limit names, as Result.Limit and Info.Enforced use them.
const (
	LimitTimeout   = "timeout"
	LimitCPU       = "cpu"
	LimitMemory    = "memory"
	LimitProcesses = "processes"
	LimitOutput    = "output"
	// LimitDisk is the disk space and file count of a sandbox's
	// workspace: a limit of the task, not of one command.
	LimitDisk = "disk"
)

// Default and maximum limits of one command.
const (
	DefaultTimeout   = 120 * time.Second
	MaxTimeout       = 10 * time.Minute
	DefaultCPU       = 120 * time.Second
	DefaultMemory    = 512 << 20
	DefaultProcesses = 256
	DefaultOutput    = 1 << 20
	// MaxCommand bounds the command text: the kernel refuses a single
	// argument over 128 KiB, and longer scripts belong in a file.
	MaxCommand = 64 << 10
)

// Limits bound one command. A zero field means "the default".
type Limits struct {
	// Timeout is wall-clock time.
	Timeout time.Duration
	// CPU is CPU time, of the whole command where the provider can
	// account it (cgroups), else of each process.
	CPU time.Duration
	// Memory is bytes of memory, of the whole command where the provider
	// can account it, else of each process's data.
	Memory int64
	// Processes is how many processes and threads may exist at once.
	Processes int
	// Output is how many bytes of output (stdout and stderr together) are
	// kept; past it the command is stopped.
	Output int
}

// Or fills l's zero fields from d.
func (l Limits) Or(d Limits) Limits {
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.CPU <= 0 {
		l.CPU = d.CPU
	}
	if l.Memory <= 0 {
		l.Memory = d.Memory
	}
	if l.Processes <= 0 {
		l.Processes = d.Processes
	}
	if l.Output <= 0 {
		l.Output = d.Output
	}
	return l
}

// WithDefaults fills l's zero fields with the package defaults and caps the
// timeout at MaxTimeout.
func (l Limits) WithDefaults() Limits {
	l = l.Or(Limits{Timeout: DefaultTimeout, CPU: DefaultCPU, Memory: DefaultMemory, Processes: DefaultProcesses, Output: DefaultOutput})
	l.Timeout = min(l.Timeout, MaxTimeout)
	return l
}

// Describe names limit l's value for a person: "memory limit of 512 MiB".
func (l Limits) Describe(limit string) string {
	switch limit {
	case LimitTimeout:
		return fmt.Sprintf("time limit of %s", l.Timeout)
	case LimitCPU:
		return fmt.Sprintf("CPU time limit of %s", l.CPU)
	case LimitMemory:
		return fmt.Sprintf("memory limit of %s", SizeText(l.Memory))
	case LimitProcesses:
		return fmt.Sprintf("process limit of %d", l.Processes)
	case LimitOutput:
		return fmt.Sprintf("output limit of %s", SizeText(int64(l.Output)))
	}
	return limit + " limit"
}

// SizeText names a number of bytes for a person: "512 MiB".
func SizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ExecParams is one command.
type ExecParams struct {
	// Command runs with sh -c in /workspace.
	Command string
	// Limits override the sandbox's for this command; zero fields keep
	// them.
	Limits Limits
	// Progress, when set, is also given the output as it comes, where the
	// provider can (the rest only fill Result.Output). It must not block.
	Progress io.Writer
	// Env holds "NAME=value" pairs for this command only, over the
	// sandbox's (CheckEnv's rules): the secrets of the skills loaded
	// when it runs. Providers hand them over in the command's environment,
	// never as an argument of a process (arguments are readable by every
	// user of the host in /proc).
	Env []string
	// Allow adds hosts (CreateParams.Allow's forms) this command may reach
	// besides the sandbox's own: the hosts granted to the skills loaded
	// when it runs. An isolating provider gives the command a proxy for
	// them even in a sandbox made without the network, and refuses
	// everything else as before.
	Allow []string
}

// CheckCommand refuses a command that cannot run: empty, too long, or
// holding a NUL byte (no argument can).
func CheckCommand(cmd string) error {
	switch {
	case strings.TrimSpace(cmd) == "":
		return skilld.Errorf(skilld.EINVALID, "command is empty")
	case len(cmd) > MaxCommand:
		return skilld.Errorf(skilld.ETOOLARGE, "command is %d bytes, more than %d; write it to a file and run the file", len(cmd), MaxCommand)
	case strings.IndexByte(cmd, 0) >= 0:
		return skilld.Errorf(skilld.EINVALID, "command contains a NUL byte")
	}
	return nil
}

// Result is how a command ended.
type Result struct {
	// Output is stdout and stderr as they interleaved, at most
	// Limits.Output bytes.
	Output []byte
	// ExitCode is the command's exit status; 128+n when signal n ended it;
	// -1 when it was killed from outside.
	ExitCode int
	// Limit names the limit that stopped the command ("" when none did).
	Limit string
	// Truncated is set when output was cut at the output limit.
	Truncated bool
	// Limits are the limits the command ran with.
	Limits   Limits
	Duration time.Duration
	// Egress are the network connections the command made through the
	// sandbox's proxy, and those it refused, in the order they ended.
	Egress []EgressEvent
}

// EgressEvent is one connection through a sandbox's proxy, or a refusal.
type EgressEvent struct {
	Host string `json:"host"`
	Port int    `json:"port"`
	// IP is the address connected to (or the one that got a name
	// refused).
	IP     string `json:"ip,omitempty"`
	Method string `json:"method,omitempty"`
	// Allowed says the allowlist let it through; Reason says why not, or
	// why an allowed connection failed.
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason,omitempty"`
	// Entry is the allowlist entry that let it through ("*" for the public
	// web).
	Entry     string `json:"entry,omitempty"`
	Status    int    `json:"status,omitempty"`
	BytesUp   int64  `json:"bytes_up"`
	BytesDown int64  `json:"bytes_down"`
	// DurationMS is how long the connection lasted.
	DurationMS int64 `json:"duration_ms"`
}

// Summary is the line a tool result ends with: the exit status, or which
// limit stopped the command and that everything it started was killed.
func (r *Result) Summary() string {
	var b strings.Builder
	if r.Truncated {
		fmt.Fprintf(&b, "[output cut at %d bytes]\n", r.Limits.Output)
	}
	if r.Limit != "" {
		fmt.Fprintf(&b, "[stopped: the command reached the %s; it and every process it started were killed]", r.Limits.Describe(r.Limit))
		return b.String()
	}
	fmt.Fprintf(&b, "[exit status %d]", r.ExitCode)
	return b.String()
}

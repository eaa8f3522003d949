package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// floorSource is the floor of the start-up benchmarks: a program of the
// standard library alone that prints a version, or serves /healthz.
const floorSource = `package main

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "serve" {
		http.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "{\"status\": \"ok\"}") })
		fmt.Fprintln(os.Stderr, http.ListenAndServe(os.Args[2], nil))
		os.Exit(1)
	}
	fmt.Printf("floor devel (%s, %s/%s)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
`

// startupBinaries builds skilld and the floor into one folder.
func startupBinaries(b *testing.B) (skilld, floor string) {
	b.Helper()
	if testing.Short() {
		b.Skip("builds skilld and a floor program, which takes a minute")
	}
	dir := b.TempDir()
	src := filepath.Join(dir, "floor")
	if err := os.MkdirAll(src, 0o755); err != nil {
		b.Fatal(err)
	}
	for name, text := range map[string]string{"main.go": floorSource, "go.mod": "module floor\n\ngo 1.26\n"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	skilld, floor = filepath.Join(dir, "skilld"), filepath.Join(dir, "floor-bin")
	for _, c := range []*exec.Cmd{exec.Command("go", "build", "-o", skilld, "."), exec.Command("go", "build", "-o", floor, ".")} {
		if c.Args[len(c.Args)-2] == floor {
			c.Dir = src
		}
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", c, err, out)
		}
	}
	return skilld, floor
}

// BenchmarkStartup measures skilld's start against the floor's, side by
// side: version, a process that prints its version and exits (the cost
// of the binary's package initialisers; cpu-ns/op is its user and system
// time), and serve, from the start of the process to its first good
// answer on /healthz (skilld with SQLite and file blobs in a data folder
// served once before, and the default sandbox).
func BenchmarkStartup(b *testing.B) {
	skilld, floor := startupBinaries(b)
	data := b.TempDir()
	serveArgs := func(bin, addr string) []string {
		if bin == floor {
			return []string{"serve", addr}
		}
		return []string{"serve", "--addr", addr, "--data", data}
	}
	// The first start migrates the database and writes the admin token.
	serveOnce(b, skilld, serveArgs(skilld, freeAddr(b)))
	bins := []struct{ name, path string }{{"floor", floor}, {"skilld", skilld}}
	for _, bin := range bins {
		b.Run("version/"+bin.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				c := exec.Command(bin.path, "version")
				if out, err := c.Output(); err != nil || len(out) == 0 {
					b.Fatalf("%s version: %v %q", bin.path, err, out)
				}
				cpu += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
	for _, bin := range bins {
		b.Run("serve/"+bin.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				cpu += serveOnce(b, bin.path, serveArgs(bin.path, freeAddr(b)))
			}
			if cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// serveOnce starts a server, waits for a 200 from /healthz, and stops
// it; the benchmark's clock stops while it shuts down. It returns the
// CPU time the server's threads had used when it answered (0 where
// /proc does not tell), which the machine's other load moves far less
// than the wall time; the sandbox check's own processes are not in it.
func serveOnce(b *testing.B, bin string, args []string) time.Duration {
	b.Helper()
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), "SKILLD_BOOTSTRAP_TOKEN=skd_startupbenchmarktoken0000000000")
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		b.StopTimer()
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
		b.StartTimer()
	}()
	url := "http://" + args[indexOfAddr(args)] + "/healthz"
	client := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return threadsCPU(c.Process.Pid)
			}
		}
	}
	b.Fatalf("%s %q: no healthy answer in 30s", bin, args)
	return 0
}

// threadsCPU sums the time on CPU of every thread of process pid, in
// nanoseconds (the first field of /proc/<pid>/task/<tid>/schedstat); 0
// if /proc does not have it.
func threadsCPU(pid int) time.Duration {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread ended meanwhile
		}
		ns, err := strconv.ParseInt(strings.Fields(string(data) + " 0")[0], 10, 64)
		if err != nil {
			return 0
		}
		sum += time.Duration(ns)
	}
	return sum
}

// indexOfAddr finds the listen address among a server's arguments.
func indexOfAddr(args []string) int {
	if args[1] == "--addr" {
		return 2
	}
	return 1
}

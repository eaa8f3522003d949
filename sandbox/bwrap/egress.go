package bwrap

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/egress"
)

// proxyAddr is where a command finds its proxy: in its own network
// namespace, which has no other way out.
const proxyAddr = "127.0.0.1:3128"

// proxyEnv are the variables that point the usual clients (curl, wget,
// git, Python, pip, npm) at the proxy. localhost stays direct: it is the
// command's own loopback; 127.0.0.1 goes through the proxy, to the host's
// when the allowlist names it.
func proxyEnv() []string {
	u := "http://" + proxyAddr
	return []string{"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "http_proxy=" + u, "https_proxy=" + u, "ALL_PROXY=" + u,
		"NO_PROXY=localhost", "no_proxy=localhost", "npm_config_proxy=" + u, "npm_config_https_proxy=" + u, "PIP_PROXY=" + u}
}

// egressPlan is a sandbox's network: the hosts its commands may reach.
type egressPlan struct {
	allow egress.Allowlist
}

// newEgressPlan reads CreateParams' network settings: nil without network.
func newEgressPlan(c sandbox.CreateParams) (*egressPlan, error) {
	if !c.Network {
		if len(c.Allow) > 0 {
			return nil, skilld.Errorf(skilld.EINVALID, "hosts to allow were given without the network")
		}
		return nil, nil
	}
	if len(c.Allow) == 0 {
		return &egressPlan{allow: egress.PublicWeb()}, nil
	}
	a, err := egress.ParseAllowlist(c.Allow)
	if err != nil {
		return nil, err
	}
	return &egressPlan{allow: a}, nil
}

// with is the plan of one command that may also reach the hosts of
// allow: nil when neither the sandbox nor the command has a network. The
// public web of a sandbox that names no hosts stays; the command's hosts
// are added to it.
func (e *egressPlan) with(allow []string) (*egressPlan, error) {
	if len(allow) == 0 {
		return e, nil
	}
	extra, err := egress.ParseAllowlist(allow)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return &egressPlan{allow: extra}, nil
	}
	return &egressPlan{allow: e.allow.Union(extra)}, nil
}

// commandProxy is one command's proxy: it listens in the command's network
// namespace and records what passed.
type commandProxy struct {
	proxy  *egress.Proxy
	mu     sync.Mutex
	events []sandbox.EgressEvent
	served chan struct{}
}

// start makes the command's proxy. It reads bwrap's info (the sandbox's
// first process), opens the listener in that process's network namespace,
// and then lets bwrap run the command (a byte on block). A failure still
// lets the command run, without a way out; the error says why.
func (e *egressPlan) start(info *os.File, block *os.File) (*commandProxy, error) {
	defer block.Close()
	cp := &commandProxy{served: make(chan struct{})}
	p, err := egress.New(egress.Config{Allow: e.allow, OnEvent: cp.record})
	if err != nil {
		close(cp.served)
		return cp, err
	}
	cp.proxy = p
	pid, err := childPid(info)
	var ln net.Listener
	if err == nil {
		ln, err = listenIn(pid, proxyAddr)
	}
	if err != nil {
		close(cp.served)
		return cp, fmt.Errorf("the command's proxy: %w", err)
	}
	go func() {
		defer close(cp.served)
		p.Serve(ln)
	}()
	block.Write([]byte{1})
	return cp, nil
}

// stop ends the proxy once the command has ended: its connections close,
// and every event is recorded before it returns.
func (cp *commandProxy) stop() []sandbox.EgressEvent {
	if cp.proxy != nil {
		cp.proxy.Close()
	}
	<-cp.served
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.events
}

func (cp *commandProxy) record(e egress.Event) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.events = append(cp.events, sandbox.EgressEvent{Host: e.Host, Port: e.Port, IP: e.IP, Method: e.Method, Allowed: e.Allowed, Reason: e.Reason,
		Entry: e.Entry, Status: e.Status, BytesUp: e.BytesUp, BytesDown: e.BytesDown, DurationMS: e.Duration.Milliseconds()})
}

// childPid reads the pid of the sandbox's first process from bwrap's
// --info-fd.
func childPid(info *os.File) (int, error) {
	info.SetReadDeadline(time.Now().Add(30 * time.Second))
	var st struct {
		ChildPid int `json:"child-pid"`
	}
	if err := json.NewDecoder(bufio.NewReader(info)).Decode(&st); err != nil || st.ChildPid <= 0 {
		return 0, fmt.Errorf("reading bwrap's information: %v", err)
	}
	return st.ChildPid, nil
}

// listenIn opens a TCP listener on addr in the network namespace of
// process pid. The socket is made on a thread that enters the namespace
// and comes back; a thread that cannot come back is left locked, and so
// ends with its goroutine rather than serve anything else.
func listenIn(pid int, addr string) (net.Listener, error) {
	target, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return nil, err
	}
	defer target.Close()
	type result struct {
		ln  net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: err}
			return
		}
		defer self.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("entering the command's network: %w", err)}
			return
		}
		ln, err := net.Listen("tcp", addr)
		if berr := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); berr != nil {
			if ln != nil {
				ln.Close()
			}
			done <- result{err: fmt.Errorf("leaving the command's network: %w", berr)}
			return // the thread stays locked and goes with this goroutine
		}
		runtime.UnlockOSThread()
		done <- result{ln, err}
	}()
	r := <-done
	return r.ln, r.err
}

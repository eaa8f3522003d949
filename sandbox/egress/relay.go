package egress

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// relay copies aIn (a's bytes) to b, and b to a, until both directions have
// ended. The end of one direction is passed on as a half-close, so that a
// client that has finished sending still gets its answer; an error either
// way ends both.
func relay(a net.Conn, aIn io.Reader, b net.Conn) {
	var wg sync.WaitGroup
	wg.Go(func() { pass(b, aIn, a) })
	pass(a, b, b)
	wg.Wait()
}

// pass copies src to dst; at src's end it half-closes dst, and on an error
// (or where dst cannot be half-closed) it closes both connections.
func pass(dst net.Conn, src io.Reader, srcConn net.Conn) {
	if _, err := io.Copy(dst, src); err == nil && closeWrite(dst) == nil {
		return
	}
	dst.Close()
	srcConn.Close()
}

func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// meter wraps a destination's connection: it counts the bytes each way and
// calls onIdle when none has passed, either way, for idle. Every byte of a
// tunnel or a plain request crosses this connection, so its silence is the
// exchange's.
type meter struct {
	net.Conn
	up, down atomic.Int64 // written to the destination, read from it
	idle     time.Duration
	born     time.Time
	last     atomic.Int64 // time.Duration since born, at the last byte
	cut      atomic.Bool  // onIdle was called
	stopped  atomic.Bool
	onIdle   func()

	mu    sync.Mutex // guards timer against its own callback
	timer *time.Timer
}

func newMeter(c net.Conn, idle time.Duration, onIdle func()) *meter {
	m := &meter{Conn: c, idle: idle, born: time.Now(), onIdle: onIdle}
	m.mu.Lock()
	m.timer = time.AfterFunc(idle, m.check)
	m.mu.Unlock()
	return m
}

func (m *meter) Read(b []byte) (int, error) {
	n, err := m.Conn.Read(b)
	if n > 0 {
		m.down.Add(int64(n))
		m.last.Store(int64(time.Since(m.born)))
	}
	return n, err
}

func (m *meter) Write(b []byte) (int, error) {
	n, err := m.Conn.Write(b)
	if n > 0 {
		m.up.Add(int64(n))
		m.last.Store(int64(time.Since(m.born)))
	}
	return n, err
}

// CloseWrite half-closes the destination's connection, where it can be.
func (m *meter) CloseWrite() error { return closeWrite(m.Conn) }

func (m *meter) check() {
	if m.stopped.Load() {
		return
	}
	quiet := time.Since(m.born) - time.Duration(m.last.Load())
	if quiet >= m.idle {
		m.cut.Store(true)
		m.onIdle()
		return
	}
	m.mu.Lock()
	m.timer.Reset(m.idle - quiet)
	m.mu.Unlock()
}

// stop ends the watch for idleness; it reports whether the exchange had
// been cut for it.
func (m *meter) stop() bool {
	m.stopped.Store(true)
	m.mu.Lock()
	m.timer.Stop()
	m.mu.Unlock()
	return m.cut.Load()
}

// backoff is how long to wait before accepting again after err, when err
// says the machine is short of descriptors or memory for now (a longer
// wait each time, up to a second); 0 when err is not such an error.
func backoff(err error, last time.Duration) time.Duration {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return min(max(2*last, 5*time.Millisecond), time.Second)
		}
	}
	return 0
}

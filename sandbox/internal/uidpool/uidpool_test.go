package uidpool

import (
	"fmt"
	"sync"
	"testing"

	"github.com/skilld/skilld"
)

func TestParseRange(t *testing.T) {
	r, err := ParseRange("1879048192-1879113727")
	if err != nil || r.First != 1879048192 || r.Count != 65536 || r.String() != "1879048192-1879113727" {
		t.Fatalf("%+v %v", r, err)
	}
	for _, bad := range []string{"", "5", "10-5", "-5", "0-10", "65000-70000", "a-b", "4294967295-4294967295", "1-2-3"} {
		if _, err := ParseRange(bad); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("ParseRange(%q): %v", bad, err)
		}
	}
}

// TestClaims: concurrent claims (as from several processes sharing the
// folder) never hand out one uid twice; a full pool says so; released and
// swept uids come back; Keep holds a claim across a restart.
func TestClaims(t *testing.T) {
	dir := t.TempDir()
	p, err := New(dir, Range{First: 100000, Count: 40})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := New(dir, Range{First: 100000, Count: 40})
	var mu sync.Mutex
	got := map[uint32]string{}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			pool := p
			if i%2 == 1 {
				pool = other
			}
			id := fmt.Sprintf("t%d", i)
			uid, err := pool.Claim(id)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if prev, ok := got[uid]; ok {
				t.Errorf("uid %d given to %s and %s", uid, prev, id)
			}
			got[uid] = id
		})
	}
	wg.Wait()
	if _, err := p.Claim("one-too-many"); skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
		t.Fatalf("a full pool: %v", err)
	}
	var uid0 uint32
	for uid, id := range got {
		if id == "t0" {
			uid0 = uid
		}
	}
	if ok, err := p.Keep("t0", uid0); !ok || err != nil {
		t.Errorf("Keep of its own uid: %v %v", ok, err)
	}
	if ok, _ := p.Keep("t1", uid0); ok {
		t.Error("Keep of another sandbox's uid")
	}
	if ok, _ := p.Keep("t1", 5); ok {
		t.Error("Keep of a uid outside the range")
	}
	p.Release("t1", uid0) // not t1's: nothing happens
	if ok, _ := p.Keep("t0", uid0); !ok {
		t.Error("another sandbox released t0's uid")
	}
	p.Release("t0", uid0)
	if uid, err := p.Claim("new"); err != nil || uid != uid0 {
		t.Errorf("after a release: %d %v, want %d", uid, err, uid0)
	}
	p.Sweep(func(id string) bool { return id != "t2" && id != "t3" })
	for range 2 {
		if _, err := p.Claim("after-sweep"); err != nil {
			t.Errorf("after a sweep: %v", err)
		}
	}
	if _, err := p.Claim("full-again"); skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
		t.Errorf("full again: %v", err)
	}
}

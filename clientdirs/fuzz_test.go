package clientdirs

import (
	"bytes"
	"testing"

	"github.com/skilld/skilld"
)

// FuzzParse: whatever the bytes, Parse answers a lockfile or an invalid
// error, never panics; a lockfile it accepts is written back as one it
// reads as the same, byte for byte on the second round.
func FuzzParse(f *testing.F) {
	if data, err := sampleLock().Marshal(); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"lockfile_version":1,"skills":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			if c := skilld.ErrorCode(err); c != skilld.EINVALID {
				t.Fatalf("Parse error with code %s: %v", c, err)
			}
			return
		}
		out, err := l.Marshal()
		if err != nil {
			t.Fatalf("an accepted lockfile does not marshal: %v", err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("the written lockfile does not parse: %v\n%s", err, out)
		}
		again, err := back.Marshal()
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("writing is not stable (%v):\n%s\n---\n%s", err, out, again)
		}
		if len(back.Skills) != len(l.Skills) {
			t.Fatalf("%d skills read back, %d accepted", len(back.Skills), len(l.Skills))
		}
		for _, s := range l.Skills {
			b := back.Find(s.Name)
			if b == nil || b.ID != s.ID || b.Version != s.Version || b.Digest != s.Digest || b.Source != s.Source || len(b.Targets) != len(s.Targets) {
				t.Fatalf("skill %q read back as %+v, accepted as %+v", s.Name, b, s)
			}
		}
	})
}

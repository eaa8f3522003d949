package httpapi_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

func jsonDecode(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// BenchmarkCreateFromZip5MB uploads a 5 MB package (a SKILL.md and five
// 1 MB reference files of incompressible text) through HTTP as a raw zip:
// body read, archive read with its limits, validation, five blob writes
// with fsync, one transaction. Each iteration's files differ, so nothing
// is deduplicated away.
func BenchmarkCreateFromZip5MB(b *testing.B) {
	e := newEnvWith(b, storetest.OpenSQLite(b))
	c := &httpapi.Client{BaseURL: e.srv.URL, Token: e.admin, Workspace: "default"}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n"
	ref := make([]byte, 1<<20)
	for i := range ref {
		ref[i] = alphabet[rng.IntN(len(alphabet))]
	}
	build := func(i int) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		add := func(name string, data []byte) {
			w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
			w.Write(data)
		}
		add("big/SKILL.md", []byte(skillMD("big", "A five megabyte skill.")))
		for f := range 5 {
			data := bytes.Clone(ref)
			copy(data, fmt.Sprintf("iteration %d file %d\n", i, f))
			add(fmt.Sprintf("big/references/part-%d.txt", f), data)
		}
		zw.Close()
		return buf.Bytes()
	}
	b.SetBytes(int64(len(build(0))))
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		archive := build(i)
		b.StartTimer()
		_, err := c.Upload(b.Context(), bytes.NewReader(archive), int64(len(archive)), service.SkillOptions{Name: fmt.Sprintf("big-%d", i)})
		if err != nil {
			b.Fatal(err)
		}
	}
}

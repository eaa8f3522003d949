package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/store/storetest"
)

// listConns is how many requests the list benchmark keeps in flight:
// the load test's eight connections.
const listConns = 8

// BenchmarkListSkills10k asks for the first page of a workspace of
// 10,000 skills (GET …/skills, 50 items with the total) over real TCP,
// listConns requests at a time, as plain JSON and with gzip. Its floor is
// a server that answers every request with the bytes and headers skilld
// answered the first one with, written from memory: what serving the
// page costs net/http and the client alone. The figure to compare is
// req/s, skilld's over the floor's in the same run.
func BenchmarkListSkills10k(b *testing.B) {
	e := newEnvWith(b, storetest.OpenSQLite(b))
	e.serve(&httpapi.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	seedStore(b, e)
	url := "/v1/workspaces/default/skills"
	for _, enc := range []string{"identity", "gzip"} {
		get := func(b *testing.B, c *http.Client, base string) (http.Header, []byte) {
			req, _ := http.NewRequestWithContext(b.Context(), "GET", base+url, nil)
			req.Header.Set("Authorization", "Bearer "+e.admin)
			req.Header.Set("Accept-Encoding", enc)
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatalf("status %d, %v: %s", resp.StatusCode, err, body)
			}
			return resp.Header, body
		}
		// The client takes the bytes as sent: no decompression on its
		// side, which is the same work for both servers.
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: listConns, DisableCompression: true}}
		header, body := get(b, client, e.srv.URL)
		floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			for k, v := range header {
				switch k {
				case "Date", "Content-Length", "Transfer-Encoding":
				default:
					w.Header()[k] = v
				}
			}
			w.Write(body)
		}))
		b.Cleanup(floor.Close)
		run := func(base string) func(b *testing.B) {
			return func(b *testing.B) {
				b.SetParallelism(max(1, listConns/runtime.GOMAXPROCS(0)))
				b.SetBytes(int64(len(body)))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, got := get(b, client, base); len(got) != len(body) {
							b.Errorf("%d bytes, want %d", len(got), len(body))
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			}
		}
		b.Run(enc+"/floor", run(floor.URL))
		b.Run(enc+"/skilld", run(e.srv.URL))
	}
}

package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// loadSkills is how many skills the list load test lists from.
const loadSkills = 10_000

// TestLoadListSkills is the load generator behind docs/PERFORMANCE.md:
// concurrent GET /v1/workspaces/default/skills (first page of 50, with the
// total) against a workspace of 10,000 skills, reporting requests per
// second and latency percentiles. It runs only with SKILLD_LOAD=1.
//
// Without SKILLD_LOAD_URL it seeds an in-process server (httptest, real
// TCP) through the store; with SKILLD_LOAD_URL and SKILLD_LOAD_TOKEN (an
// admin token) it targets a running `skilld serve`, creating skills through
// the API until the workspace has 10,000. SKILLD_LOAD_CONCURRENCY
// (default 8) and SKILLD_LOAD_DURATION (default 10s) shape the run.
func TestLoadListSkills(t *testing.T) {
	if os.Getenv("SKILLD_LOAD") == "" {
		t.Skip("set SKILLD_LOAD=1 to run the list load test (see docs/PERFORMANCE.md)")
	}
	base, token := os.Getenv("SKILLD_LOAD_URL"), os.Getenv("SKILLD_LOAD_TOKEN")
	if base == "" {
		e := newEnv(t, firstDriver(t))
		seedStore(t, e)
		base, token = e.srv.URL, e.admin
	} else {
		seedAPI(t, &httpapi.Client{BaseURL: base, Token: token, Workspace: "default"})
	}
	concurrency, _ := strconv.Atoi(os.Getenv("SKILLD_LOAD_CONCURRENCY"))
	concurrency = max(concurrency, 1)
	if os.Getenv("SKILLD_LOAD_CONCURRENCY") == "" {
		concurrency = 8
	}
	duration, err := time.ParseDuration(os.Getenv("SKILLD_LOAD_DURATION"))
	if err != nil {
		duration = 10 * time.Second
	}
	url := base + "/v1/workspaces/default/skills"
	// Plain JSON unless SKILLD_LOAD_GZIP=1: Go's transport would otherwise
	// ask for gzip on its own, and the compression is measured apart.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency, DisableCompression: os.Getenv("SKILLD_LOAD_GZIP") != "1"}}
	ctx, cancel := context.WithTimeout(t.Context(), duration)
	defer cancel()
	var failures atomic.Int64
	lat := make([][]time.Duration, concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range concurrency {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				req, _ := http.NewRequestWithContext(context.Background(), "GET", url, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					failures.Add(1)
					continue
				}
				// The first answer of each worker is checked in full; the
				// others are read to the end but not decoded, so the
				// generator leaves the CPU to the server.
				if n == 0 {
					var page service.SkillPage
					err = jsonDecode(resp, &page)
					if err == nil && (page.Total < loadSkills || len(page.Items) != service.DefaultPageSize) {
						err = fmt.Errorf("page of %d items, total %d", len(page.Items), page.Total)
					}
				} else {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err != nil || resp.StatusCode != 200 {
					failures.Add(1)
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		t.Fatalf("no successful request (%d failures)", failures.Load())
	}
	pct := func(p float64) time.Duration { return all[min(len(all)-1, int(float64(len(all))*p))] }
	fmt.Printf("GET %s, %d skills, concurrency %d, %s: %d requests, %.0f req/s, p50 %s, p90 %s, p99 %s, max %s, %d failures\n",
		url, loadSkills, concurrency, elapsed.Round(time.Millisecond), len(all), float64(len(all))/elapsed.Seconds(),
		pct(0.50).Round(time.Microsecond), pct(0.90).Round(time.Microsecond), pct(0.99).Round(time.Microsecond),
		all[len(all)-1].Round(time.Microsecond), failures.Load())
	if failures.Load() > 0 {
		t.Errorf("%d failed requests", failures.Load())
	}
}

// seedStore writes the skills straight into the store, in transactions of
// 1,000, all at the version of one real package (the list reads metadata
// only, so sharing the package changes nothing it does).
func seedStore(t testing.TB, e *testEnv) {
	ctx := t.Context()
	ws, err := e.db.WorkspaceGet(ctx, &store.WorkspaceGetParams{Name: "default"})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := e.svc.Authenticate(ctx, e.admin)
	sk, err := e.svc.CreateSkill(ctx, a, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD("seed", "The package every seeded skill uses.")}})
	if err != nil {
		t.Fatal(err)
	}
	storetest.SeedSkills(t, e.db, ws.ID, sk.Digest, "A skill that exists to measure listing a workspace of ten thousand skills.", 1, loadSkills)
}

// seedAPI creates skills through the API, 8 at a time, until the
// workspace has loadSkills.
func seedAPI(t *testing.T, c *httpapi.Client) {
	ctx := t.Context()
	page, err := httpapi.Call(ctx, c, service.OpSkillsList, service.ListSkillsParams{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	next := atomic.Int64{}
	next.Store(int64(page.Total))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < loadSkills; i = next.Add(1) - 1 {
				name := fmt.Sprintf("skill-%05d", i)
				_, err := httpapi.Call(ctx, c, service.OpSkillsCreate, service.CreateSkillParams{Files: map[string]string{"SKILL.md": skillMD(name,
					"A skill that exists to measure listing a workspace of ten thousand skills.")}})
				if err != nil && skilld.ErrorCode(err) != skilld.ECONFLICT {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

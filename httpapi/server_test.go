package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

type downBlobs struct{ blob.Store }

func (downBlobs) Stat(context.Context, string) (blob.Info, error) {
	return blob.Info{}, skilld.Errorf(skilld.EUNAVAILABLE, "object store unreachable")
}

func TestHealthz(t *testing.T) {
	fs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.OpenSQLite(t)
	for _, tt := range []struct {
		name   string
		blobs  blob.Store
		status int
		checks map[string]string
	}{
		{"up", fs, 200, map[string]string{"db": "ok", "blobs": "ok"}},
		{"blobs down", downBlobs{fs}, 503, map[string]string{"db": "ok", "blobs": "unavailable: object store unreachable"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer((&httpapi.Server{Service: service.New(db, tt.blobs, nil, service.Config{}), Version: "test", Logger: slog.New(slog.DiscardHandler)}).Handler())
			defer srv.Close()
			resp, err := http.Get(srv.URL + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range apiContract().checkExchange(exchange{method: "GET", target: "/healthz", reqHeader: http.Header{},
				status: resp.StatusCode, respHeader: resp.Header, respBody: data}) {
				t.Errorf("OpenAPI contract: %s", p)
			}
			var body struct {
				Status string
				Checks map[string]string
			}
			if err := json.Unmarshal(data, &body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status || body.Checks["db"] != tt.checks["db"] || body.Checks["blobs"] != tt.checks["blobs"] {
				t.Errorf("status %d body %+v", resp.StatusCode, body)
			}
		})
	}
}

package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/skilld/skilld"
)

// teapot is a result that writes itself, in a way JSON of it would not.
type teapot struct{ body string }

func (t teapot) WriteResponse(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusTeapot)
	io.WriteString(w, t.body)
	return nil
}

// refusal is a result that finds, before writing anything, that it
// cannot be written.
type refusal struct{}

func (refusal) WriteResponse(http.ResponseWriter, *http.Request) error {
	return skilld.Errorf(skilld.ENOTFOUND, "gone meanwhile")
}

// TestReplyWritesResponders: a result that implements Responder is
// written by it, whatever the route's status and reply say, and an error
// it returns is answered as the API's error.
func TestReplyWritesResponders(t *testing.T) {
	s := &Server{}
	rt := Route{Method: http.MethodPost, Pattern: "/x", Status: http.StatusCreated, Reply: ReplyOneOrMany}
	rec := httptest.NewRecorder()
	s.reply(rec, httptest.NewRequest(http.MethodPost, "/x", nil), rt, teapot{"short and stout"})
	if rec.Code != http.StatusTeapot || rec.Body.String() != "short and stout" || rec.Header().Get("Content-Type") != "text/plain" {
		t.Errorf("teapot written as %d %q %v", rec.Code, rec.Body, rec.Header())
	}

	rec = httptest.NewRecorder()
	s.reply(rec, httptest.NewRequest(http.MethodPost, "/x", nil), rt, refusal{})
	var body ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusNotFound ||
		body.Error.Code != skilld.ENOTFOUND || body.Error.Message != "gone meanwhile" {
		t.Errorf("refusal written as %d %s (%v)", rec.Code, rec.Body, err)
	}

	// Anything else is JSON, with the route's status.
	rec = httptest.NewRecorder()
	s.reply(rec, httptest.NewRequest(http.MethodPost, "/x", nil), Route{Status: http.StatusCreated}, map[string]string{"a": "b"})
	if rec.Code != http.StatusCreated || rec.Body.String() != `{"a":"b"}`+"\n" {
		t.Errorf("a plain result written as %d %q", rec.Code, rec.Body)
	}
}

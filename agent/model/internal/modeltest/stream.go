package modeltest

import (
	"context"
	"testing"

	"github.com/skilld/skilld/agent/model"
)

// Stream runs m.Generate and returns the text chunks before the end, and
// the final response or the error that ended the stream. A stream that
// ends with neither fails the test.
func Stream(t *testing.T, m model.Model, req *model.Request) ([]string, *model.Response, error) {
	t.Helper()
	var texts []string
	for c, err := range m.Generate(context.Background(), req) {
		if err != nil {
			return texts, nil, err
		}
		if c.Response != nil {
			return texts, c.Response, nil
		}
		texts = append(texts, c.Text)
	}
	t.Fatal("the stream ended without a response or an error")
	return nil, nil, nil
}

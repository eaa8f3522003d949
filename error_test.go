package skilld_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/skilld/skilld"
)

func TestErrorCode(t *testing.T) {
	cause := fs.ErrNotExist
	typed := skilld.Errorf(skilld.ENOTFOUND, "skill %q: %w", "x", cause)
	wrapped := fmt.Errorf("loading: %w", typed)
	tests := []struct {
		name    string
		err     error
		code    string
		message string
	}{
		{"nil", nil, "", ""},
		{"untyped", errors.New("boom"), skilld.EINTERNAL, "internal error"},
		{"typed", typed, skilld.ENOTFOUND, `skill "x": file does not exist`},
		{"wrapped", wrapped, skilld.ENOTFOUND, `skill "x": file does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := skilld.ErrorCode(tt.err); got != tt.code {
				t.Errorf("ErrorCode = %q, want %q", got, tt.code)
			}
			if got := skilld.ErrorMessage(tt.err); got != tt.message {
				t.Errorf("ErrorMessage = %q, want %q", got, tt.message)
			}
		})
	}
	if !errors.Is(wrapped, fs.ErrNotExist) {
		t.Error("Errorf with %w must keep the cause for errors.Is")
	}
}

func TestErrorBackend(t *testing.T) {
	cause := skilld.Errorf(skilld.EUNAVAILABLE, "connection refused")
	marked := fmt.Errorf("listing skills: %w", skilld.FromBackend(skilld.BackendDatabase, cause))
	if got := skilld.ErrorBackend(marked); got != skilld.BackendDatabase {
		t.Errorf("ErrorBackend = %q, want database", got)
	}
	if skilld.ErrorCode(marked) != skilld.EUNAVAILABLE || skilld.ErrorMessage(marked) != "connection refused" || !errors.Is(marked, cause) {
		t.Errorf("the mark hides the error: code %q, message %q", skilld.ErrorCode(marked), skilld.ErrorMessage(marked))
	}
	if again := skilld.FromBackend(skilld.BackendBlob, marked); skilld.ErrorBackend(again) != skilld.BackendDatabase {
		t.Error("a second mark replaced the first: the backend that raised an error is the innermost")
	}
	if skilld.FromBackend(skilld.BackendBlob, nil) != nil {
		t.Error("FromBackend(nil) is not nil")
	}
	if got := skilld.ErrorBackend(errors.New("a bug")); got != "" {
		t.Errorf("ErrorBackend of an unmarked error = %q", got)
	}
}

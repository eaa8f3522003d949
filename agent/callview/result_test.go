package callview

import (
	"slices"
	"testing"
)

func TestResult(t *testing.T) {
	one, zero, killed := 1, 0, -1
	for _, c := range []struct {
		name, content  string
		isError        bool
		exit           *int
		output, status string
		failed         bool
	}{
		{"a failed command", "Traceback\nValueError: x\n[exit status 1]", false, &one, "Traceback\nValueError: x", "exit 1", true},
		{"a command that printed nothing", "[exit status 0]", false, &zero, "", "exit 0", false},
		{"a limit's line stays", "partial\n[stopped: the command reached the time limit of 1s; it and every process it started were killed]", false, &killed,
			"partial\n[stopped: the command reached the time limit of 1s; it and every process it started were killed]", "exit -1", true},
		{"another status line stays", "x\n[exit status 2]", false, &one, "x\n[exit status 2]", "exit 1", true},
		{"a tool error", "Error: command is empty", true, nil, "Error: command is empty", "error", true},
		{"another tool", "wrote 3 bytes", false, nil, "wrote 3 bytes", "", false},
	} {
		r := NewResult(c.content, c.isError, c.exit)
		if r.Output != c.output || r.Status() != c.status || r.Failed() != c.failed {
			t.Errorf("%s: %q %q %v, want %q %q %v", c.name, r.Output, r.Status(), r.Failed(), c.output, c.status, c.failed)
		}
	}
}

func TestLines(t *testing.T) {
	if got := Lines("a\nb\n\n"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Lines: %q", got)
	}
	if got := Lines("\n"); got != nil {
		t.Errorf("Lines of nothing: %q", got)
	}
	lines := []string{"1", "2", "3", "4", "5"}
	if shown, more := Head(lines, 2); !slices.Equal(shown, []string{"1", "2"}) || more != 3 {
		t.Errorf("Head: %q %d", shown, more)
	}
	if shown, earlier := Tail(lines, 2); !slices.Equal(shown, []string{"4", "5"}) || earlier != 3 {
		t.Errorf("Tail: %q %d", shown, earlier)
	}
	if shown, earlier := Tail(lines, 9); len(shown) != 5 || earlier != 0 {
		t.Errorf("Tail of fewer: %q %d", shown, earlier)
	}
}

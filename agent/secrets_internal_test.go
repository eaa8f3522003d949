package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSecretsRedact: every value is replaced by its name in text and in
// JSON, where characters JSON escapes (quotes, <, newlines) change how the
// value is written; a value holding another is replaced whole.
func TestSecretsRedact(t *testing.T) {
	s := newSecrets(map[string]string{"SHORT": "abcd", "LONG": "xx-abcd-\"<q>\"\n-yy", "EMPTY": ""})
	text := "a abcd b xx-abcd-\"<q>\"\n-yy c"
	if got := s.redact(text); got != "a [secret SHORT] b [secret LONG] c" {
		t.Errorf("redact: %q", got)
	}
	b, _ := json.Marshal(map[string]string{"content": text})
	got := string(s.redactJSON(b))
	if strings.Contains(got, "abcd") || strings.Contains(got, "yy") || !strings.Contains(got, "[secret LONG]") {
		t.Errorf("redactJSON: %s", got)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(got), &back); err != nil || back["content"] != "a [secret SHORT] b [secret LONG] c" {
		t.Errorf("redacted JSON reads back as %q (%v)", back["content"], err)
	}
	p := s.redactPayload(TaskCompleted{Output: "it is abcd"})
	if out := p.(TaskCompleted).Output; out != "it is [secret SHORT]" {
		t.Errorf("redactPayload: %q", out)
	}
	var none *secrets
	if none.redact("abcd") != "abcd" || none.redactPayload(TaskCompleted{Output: "abcd"}).(TaskCompleted).Output != "abcd" {
		t.Error("a run without secrets changed text")
	}
}

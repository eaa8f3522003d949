package web_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// chromeConversation: a task whose second command fails runs to the end;
// its page, followed live and then opened afresh, shows the conversation:
// the input, the commands as typed with their outputs folded, the failed
// call marked in red with its output open, the final answer rendered, and
// beside it what the model saw.
func chromeConversation(t *testing.T, srv *chromeServer, b *chromeTab) {
	script, err := filepath.Abs(filepath.Join("testdata", "browser", "failing-script.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv.api(t, chromeAdminToken, "POST", "/v1/workspaces/default/agents", map[string]any{
		"name": "reporter", "config": map[string]any{"model": "scripted:" + script, "context": map[string]any{"window": 32000}},
		"skills": []map[string]any{{"skill": "csv-inspector"}},
	}, http.StatusCreated, nil)
	input := "Summarize orders.csv and missing.csv"
	taskPage := chromeStartTask(b, "reporter", input)
	// Followed live: the conversation grows in place to the task's end.
	b.waitText("#conversation", "Task completed, but 1 tool call failed")
	b.waitText("#status", "completed")

	b.visit(taskPage, "#conversation")
	if got := b.text("#conversation .turn.user"); !strings.Contains(got, input) {
		b.fail("the user's turn is %q", got)
	}
	first := `#conversation .turn.call[data-tool="shell"]:not(.failed)`
	if got := b.text(first + " pre.command"); got != "sh skills/csv-inspector-*/scripts/csv-summary.sh orders.csv && echo summarized" {
		b.fail("the command reads %q", got)
	}
	if got := b.text(first + " .call-status"); got != "exit 0" {
		b.fail("the successful command's status is %q", got)
	}
	folded := chromeGet(b, "the output's state", chromedp.Evaluate[string](fmt.Sprintf(`(() => {
		const d = document.querySelector(%q);
		return d ? (d.open ? "open" : "folded: " + d.querySelector("summary").textContent + " | " + d.textContent) : "none";
	})()`, first+" details.output")))
	if !strings.HasPrefix(folded, "folded: Output · ") || !strings.Contains(folded, "rows: 2") || !strings.Contains(folded, "summarized") {
		b.fail("the successful output is %q, want it folded, holding the script's output", folded)
	}

	if n := b.count("#conversation .turn.call.failed"); n != 1 {
		b.fail("%d failed calls marked, want 1", n)
	}
	failed := "#conversation .turn.call.failed"
	if got := b.text(failed + " pre.command"); got != "cd skills/csv-inspector-* && sh scripts/csv-summary.sh missing.csv" {
		b.fail("the failed command reads %q", got)
	}
	if got := b.text(failed + " .call-status"); got != "failed: exit 2" {
		b.fail("the failed call's status is %q", got)
	}
	if got := b.text(failed + " details.output[open] pre"); !strings.Contains(got, "usage: csv-summary.sh FILE.csv") {
		b.fail("the failed call's output is not open with the script's message: %q", got)
	}
	if color := chromeGet(b, "the failure's colour", chromedp.Evaluate[string](fmt.Sprintf(
		`getComputedStyle(document.querySelector(%q)).borderLeftColor`, failed))); color != "rgb(164, 14, 38)" {
		b.fail("the failed call's border is %s, not the page's red", color)
	}

	answer := chromeGet(b, "the last answer", chromedp.Evaluate[string](
		`[...document.querySelectorAll("#conversation .turn.assistant .markdown")].pop().textContent`))
	if !strings.Contains(answer, "orders.csv has 2 rows") || b.count(`#conversation .turn.assistant .markdown strong`) != 2 {
		b.fail("the final answer is %q, its Markdown not rendered", answer)
	}
	if got := b.text("#conversation .turn.notice"); got != "Task completed, but 1 tool call failed" {
		b.fail("the task's end reads %q", got)
	}
	// Beside it, what the model saw; each answer links to its request.
	href := chromeGet(b, "the answer's link", chromedp.Evaluate[string](
		`document.querySelector("#conversation .turn.assistant a[href^='#request-']").getAttribute("href")`))
	if b.count("#requests "+href) != 1 {
		b.fail("the answer links to %s, which is not among the requests", href)
	}
	b.shotOf("conversation", ".conversation-view")
}

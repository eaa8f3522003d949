package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/skilld/skilld/analytics"
	"github.com/skilld/skilld/service"
)

// timeFlag is a flag holding an RFC 3339 time (unset: the zero time).
type timeFlag struct{ t *time.Time }

func (f timeFlag) String() string {
	if f.t == nil || f.t.IsZero() {
		return ""
	}
	return f.t.Format(time.RFC3339)
}

func (f timeFlag) Set(s string) error {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("not an RFC 3339 time such as 2026-01-02T15:04:05Z")
	}
	*f.t = t
	return nil
}

// runSkillsStats is "skills stats": what finished tasks did with each
// skill, a row per skill, then the skills offered and never activated.
func runSkillsStats(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills stats", "[--agent NAME] [--from TIME] [--to TIME]")
	var p service.SkillStatsParams
	c.fs.StringVar(&p.Agent, "agent", "", "only this agent's tasks and skills (name or ID)")
	c.fs.Var(timeFlag{&p.From}, "from", "only tasks created at or after `TIME` (RFC 3339, such as 2026-01-02T15:04:05Z)")
	c.fs.Var(timeFlag{&p.To}, "to", "only tasks created before `TIME` (RFC 3339)")
	if code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	res, ok := call(ctx, c, service.OpSkillsStats, p)
	if !ok {
		return exitFailure
	}
	return c.output(res, func(w io.Writer) {
		row(w, "NAME", "TASKS", "OFFERED", "FULL/SHORT/NAME", "UNLISTED", "HIDDEN", "WITHHELD", "ACTIVATED", "ACTIVATIONS", "FIRST CALL", "REFUSALS", "UNLOADS")
		var never []string
		for _, it := range res.Items {
			first := "-"
			if it.FirstIteration != nil {
				first = fmt.Sprintf("%.1f", *it.FirstIteration)
			}
			row(w, it.Name, it.Tasks, it.Offered, fmt.Sprintf("%d/%d/%d", it.OfferedFull, it.OfferedShortened, it.OfferedNameOnly),
				it.Unlisted, it.Hidden, it.Withheld, it.TasksActivated, it.Activations, first, it.Refusals, it.Unloads)
			if it.OfferedNeverActivated {
				never = append(never, neverLine(it))
			}
		}
		if len(never) > 0 {
			fmt.Fprintf(w, "\nOffered but never activated (check that their descriptions say when to use them):\n%s", strings.Join(never, ""))
		}
	})
}

// neverLine names a skill offered and never activated, and how it was
// offered.
func neverLine(it analytics.SkillStats) string {
	return fmt.Sprintf("  %s: offered in %d tasks (%d in full, %d shortened, %d by name only)\n",
		it.Name, it.Offered, it.OfferedFull, it.OfferedShortened, it.OfferedNameOnly)
}

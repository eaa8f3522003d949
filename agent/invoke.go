package agent

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// invocation is a user's /name invocation of a skill: the text after the
// name, given to the skill's instructions as its arguments.
type invocation struct {
	args string
}

// parseInvocation reads a task input of the form "/name args": a slash,
// the name of an attached skill the user may invoke, then nothing or
// white space and the arguments. Any other input is no invocation.
func parseInvocation(input string, byName map[string]Skill) (name string, inv *invocation) {
	rest, ok := strings.CutPrefix(strings.TrimLeftFunc(input, unicode.IsSpace), "/")
	if !ok {
		return "", nil
	}
	end := strings.IndexFunc(rest, unicode.IsSpace)
	if end < 0 {
		end = len(rest)
	}
	name = rest[:end]
	s, ok := byName[name]
	if !ok || s.NoUserInvocation || s.Withheld != "" {
		return "", nil
	}
	return name, &invocation{args: strings.TrimSpace(rest[end:])}
}

// substitute fills a SKILL.md's placeholders as the clients that define
// them do: ${SKILL_DIR} (and $SKILL_DIR) is the skill's folder in the
// sandbox, for every activation; for a user's invocation $ARGUMENTS is the
// whole argument text and $1 to $9 its white-space separated words (empty
// when absent). Instructions that name no $ARGUMENTS get the arguments
// appended, so they are never lost.
func substitute(md string, inv *invocation, dir string) string {
	md = strings.NewReplacer("${SKILL_DIR}", dir, "$SKILL_DIR", dir).Replace(md)
	if inv == nil {
		return md
	}
	words := strings.Fields(inv.args)
	pairs := []string{"$ARGUMENTS", inv.args}
	for i := 9; i >= 1; i-- { // no prefix of a longer placeholder: $1 is last
		w := ""
		if i <= len(words) {
			w = words[i-1]
		}
		pairs = append(pairs, "$"+strconv.Itoa(i), w)
	}
	named := strings.Contains(md, "$ARGUMENTS")
	md = strings.NewReplacer(pairs...).Replace(md)
	if !named && inv.args != "" {
		md = strings.TrimRight(md, "\n") + "\n\nARGUMENTS: " + inv.args + "\n"
	}
	return md
}

// userInvocation activates the skill the task's input invokes, if any,
// and returns the input the model is given: the user's words followed by
// what the activation says (the instructions, or where they were loaded).
func (r *run) userInvocation(ctx context.Context, input string) string {
	name, inv := parseInvocation(input, r.byName)
	if inv == nil {
		return input
	}
	var out string
	var err error
	if !r.effect(ctx, func() { out, err = r.activateWith(ctx, name, inv) }) {
		return input
	}
	if err != nil {
		return fmt.Sprintf("%s\n\n[The user invoked the skill %s, which could not be activated: %s]", input, name, errorText(err))
	}
	return fmt.Sprintf("%s\n\n[The user invoked the skill %s; it is active:]\n\n%s", input, name, out)
}

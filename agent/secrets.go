package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// SecretSource opens the secrets granted to a run's skills, by name. A
// name not set in the workspace is left out of the map, not an error.
type SecretSource func(ctx context.Context, names []string) (map[string]string, error)

// secrets are the values of the secrets granted to the run's skills, read
// once at its start: commands get those of the skills loaded when they
// run, and every value is replaced by its name wherever the run would
// write it (tool results, events, the log, outputs), so that a secret
// reaches a command's environment and nothing else.
type secrets struct {
	values map[string]string
	// order holds the names, longest value first, so that a value that
	// holds another is replaced whole.
	order []string
	// encoded are the values as a JSON string holds them, for the log.
	encoded map[string][]byte
}

// loadSecrets opens every secret some skill of the run is granted.
func (r *run) loadSecrets(ctx context.Context) error {
	var names []string
	for _, s := range r.cfg.Skills {
		for _, n := range s.Secrets {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 || r.cfg.Secrets == nil {
		return nil
	}
	values, err := r.cfg.Secrets(ctx, names)
	if err != nil {
		return fmt.Errorf("opening the secrets granted to the task's skills: %w", err)
	}
	r.secrets = newSecrets(values)
	return nil
}

func newSecrets(values map[string]string) *secrets {
	s := &secrets{values: map[string]string{}, encoded: map[string][]byte{}}
	for name, v := range values {
		if v == "" {
			continue
		}
		s.values[name] = v
		s.order = append(s.order, name)
		b, _ := json.Marshal(v)
		s.encoded[name] = b[1 : len(b)-1]
	}
	slices.SortFunc(s.order, func(a, b string) int {
		if d := len(s.values[b]) - len(s.values[a]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return s
}

// mark is what stands for the secret name's value.
func mark(name string) string { return "[secret " + name + "]" }

// redact replaces every secret's value in text by its mark.
func (s *secrets) redact(text string) string {
	if s == nil {
		return text
	}
	for _, name := range s.order {
		if v := s.values[name]; strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, mark(name))
		}
	}
	return text
}

// redactJSON replaces every secret's value in a JSON document by its mark.
func (s *secrets) redactJSON(b []byte) []byte {
	if s == nil {
		return b
	}
	for _, name := range s.order {
		if enc := s.encoded[name]; bytes.Contains(b, enc) {
			b = bytes.ReplaceAll(b, enc, []byte(mark(name)))
		}
	}
	return b
}

// redactPayload returns p with every secret's value replaced, p itself
// when it holds none: events reach their consumers as the log has them.
func (s *secrets) redactPayload(p Payload) Payload {
	if s == nil || p == nil {
		return p
	}
	b, err := json.Marshal(p)
	if err != nil {
		return p
	}
	clean := s.redactJSON(b)
	if bytes.Equal(b, clean) {
		return p
	}
	t := reflect.TypeOf(p)
	ptr := t.Kind() == reflect.Pointer
	if ptr {
		t = t.Elem()
	}
	v := reflect.New(t)
	if err := json.Unmarshal(clean, v.Interface()); err != nil {
		// Unreachable for the run's own payloads; never hand on the
		// value: the event goes out empty.
		v = reflect.New(t)
	}
	if ptr {
		return v.Interface().(Payload)
	}
	return v.Elem().Interface().(Payload)
}

// commandGrants are what a command gets from the skills loaded when it
// runs: their hosts, the values of their secrets, and, for its event,
// which skills and names.
func (r *run) commandGrants() (allow, env []string, ev *ToolGranted) {
	for _, name := range r.res.order() {
		s, ok := r.byName[name]
		// A skill loaded here and granted something: its grants go with
		// it when it unloads (order lists only the loaded ones).
		if !ok || len(s.Network) == 0 && len(s.Secrets) == 0 {
			continue
		}
		if ev == nil {
			ev = &ToolGranted{Skills: []string{}, Network: []string{}, Secrets: []string{}}
		}
		ev.Skills = append(ev.Skills, name)
		for _, h := range s.Network {
			if !slices.Contains(ev.Network, h) {
				ev.Network = append(ev.Network, h)
			}
		}
		for _, n := range s.Secrets {
			if slices.Contains(ev.Secrets, n) || slices.Contains(ev.Missing, n) {
				continue
			}
			if v, ok := r.secrets.value(n); ok {
				ev.Secrets = append(ev.Secrets, n)
				env = append(env, n+"="+v)
			} else {
				ev.Missing = append(ev.Missing, n)
			}
		}
	}
	if ev != nil && len(ev.Network) > 0 {
		if r.cfg.NoSkillNetwork != "" {
			ev.NetworkOff = r.cfg.NoSkillNetwork
		} else {
			allow = ev.Network
		}
	}
	return allow, env, ev
}

func (s *secrets) value(name string) (string, bool) {
	if s == nil {
		return "", false
	}
	v, ok := s.values[name]
	return v, ok
}

// grantNotes are the lines a command's output ends with about what its
// skills were granted and did not get.
func grantNotes(ev *ToolGranted) string {
	if ev == nil {
		return ""
	}
	var b strings.Builder
	for _, n := range ev.Missing {
		fmt.Fprintf(&b, "[secret %s, granted to a loaded skill, is not set in this workspace: the command ran without it]\n", n)
	}
	if ev.NetworkOff != "" {
		fmt.Fprintf(&b, "[the hosts granted to the loaded skills (%s) were not opened: %s]\n", strings.Join(ev.Network, ", "), ev.NetworkOff)
	}
	return b.String()
}

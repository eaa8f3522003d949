// Package callview is how a tool call and its result read for people: the
// CLI's follow view and the web UI's conversation show calls through it.
// A model writes arguments as JSON, where a command's "&&" may arrive as
// "\u0026\u0026" and every newline as "\n"; people read the command as
// typed and the other arguments as key=value.
package callview

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/skilld/skilld/agent"
)

// Args is a call's arguments as a person reads them: exactly one of
// Command (a shell call's command, with its other arguments in Pairs),
// Pairs (an object's fields in the order the model wrote them) or JSON
// (anything else) is the main part.
type Args struct {
	Command string
	Pairs   []Pair
	JSON    string
}

// Pair is one argument: its name and its value as text (a string as it
// is, anything else as JSON without HTML escaping).
type Pair struct {
	Key, Value string
	// Quoted says Value must be quoted to read as one word on a line: it
	// is empty or holds spaces, quotes or control characters.
	Quoted bool
}

// ParseArgs reads a call's JSON arguments. It never fails: arguments that
// are not a JSON object come back as JSON (invalid JSON as the text the
// model wrote).
func ParseArgs(tool string, raw json.RawMessage) Args {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return Args{}
	}
	pairs, err := objectPairs(trimmed)
	if err != nil {
		return Args{JSON: plainJSON(trimmed)}
	}
	if tool == agent.ToolShell {
		for i, p := range pairs {
			if p.Key == "command" && p.isString {
				return Args{Command: p.Value, Pairs: public(append(pairs[:i:i], pairs[i+1:]...))}
			}
		}
	}
	return Args{Pairs: public(pairs)}
}

// String is the arguments on as few lines as they need: the command
// (followed by its other arguments in brackets), or key=value pairs
// separated by spaces, or the JSON.
func (a Args) String() string {
	pairs := make([]string, len(a.Pairs))
	for i, p := range a.Pairs {
		pairs[i] = p.String()
	}
	kv := strings.Join(pairs, " ")
	switch {
	case a.Command != "" && kv != "":
		return a.Command + "  [" + kv + "]"
	case a.Command != "":
		return a.Command
	case kv != "":
		return kv
	}
	return a.JSON
}

// String is key=value, the value quoted when it has to be.
func (p Pair) String() string {
	if p.Quoted {
		return p.Key + "=" + strconv.Quote(p.Value)
	}
	return p.Key + "=" + p.Value
}

// pair is a Pair while parsing: whether its value was a JSON string.
type pair struct {
	Pair
	isString bool
}

func public(ps []pair) []Pair {
	out := make([]Pair, len(ps))
	for i, p := range ps {
		out[i] = p.Pair
	}
	return out
}

var errNotObject = errors.New("not a JSON object")

// objectPairs reads a JSON object's fields in order. Duplicate keys are
// kept as written: the view shows what the model sent.
func objectPairs(b []byte) ([]pair, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errNotObject
	}
	var out []pair
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		p := pair{Pair: Pair{Key: key}}
		var s string
		if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
			p.Value, p.isString, p.Quoted = s, true, needsQuotes(s)
		} else {
			p.Value = plainJSON(v)
		}
		out = append(out, p)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	// Nothing may follow the object.
	if _, err := dec.Token(); err != io.EOF {
		return nil, errNotObject
	}
	return out, nil
}

// plainJSON is the JSON compacted, in the order it was written, with the
// escapes Go's encoder writes for HTML ("\u0026" for "&", "\u003c",
// "\u003e") turned back into their characters; text that is not JSON comes
// back as it is.
func plainJSON(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return string(b)
	}
	return unescapeHTML(buf.Bytes())
}

// htmlEscape is the character of one of the escapes Go writes for HTML.
func htmlEscape(esc string) (byte, bool) {
	switch strings.ToLower(esc) {
	case `\u0026`:
		return '&', true
	case `\u003c`:
		return '<', true
	case `\u003e`:
		return '>', true
	}
	return 0, false
}

// unescapeHTML undoes htmlEscape's escapes in valid compact JSON: inside strings, an
// escape is read whole, so an escaped backslash followed by "u0026" stays.
func unescapeHTML(b []byte) string {
	var out strings.Builder
	out.Grow(len(b))
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\' && i+1 < len(b):
			if i+6 <= len(b) {
				if r, ok := htmlEscape(string(b[i : i+6])); ok {
					out.WriteByte(r)
					i += 5
					continue
				}
			}
			out.WriteByte(c)
			i++
			c = b[i]
		}
		out.WriteByte(c)
	}
	return out.String()
}

// needsQuotes reports whether s would not read as one word.
func needsQuotes(s string) bool {
	if s == "" {
		return true
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '"' || r == '\'' || r == '\\' {
			return true
		}
	}
	return false
}

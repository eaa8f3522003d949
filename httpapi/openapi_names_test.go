package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
)

type pair[A, B any] struct {
	First  A `json:"first"`
	Second B `json:"second"`
}

type page[T any] struct {
	Items []T `json:"items"`
}

type namedThing struct{}

// TestSchemaName checks component names for every shape of type a result
// may have: each is the name it should be and valid by OpenAPI's rule.
func TestSchemaName(t *testing.T) {
	for _, tc := range []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[skilld.Task](), "Task"},
		{reflect.TypeFor[*skilld.Task](), "Task"},
		{reflect.TypeFor[[]*skilld.TaskLogEntry](), "TaskLogEntryList"},
		{reflect.TypeFor[[3]int](), "IntList"},
		{reflect.TypeFor[map[string]agent.Event](), "EventMap"},
		{reflect.TypeFor[map[string][]string](), "StringListMap"},
		{reflect.TypeFor[string](), "String"},
		{reflect.TypeFor[skilld.TaskStatus](), "TaskStatus"},
		{reflect.TypeFor[page[skilld.Task]](), "PageOfTask"},
		{reflect.TypeFor[*page[*skilld.Task]](), "PageOfTask"},
		{reflect.TypeFor[page[[]*namedThing]](), "PageOfNamedThingList"},
		{reflect.TypeFor[pair[string, map[string]page[int]]](), "PairOfStringAndPageOfIntMap"},
		{reflect.TypeFor[pair[[2]time.Time, pair[int, bool]]](), "PairOfTimeListAndPairOfIntAndBool"},
		{reflect.TypeFor[page[struct{ X int }]](), "PageOfStructXint"},
		{reflect.TypeFor[struct{ X int }](), "Object"},
		{reflect.TypeFor[any](), "Value"},
		{reflect.TypeFor[[]any](), "ValueList"},
	} {
		got := schemaName(tc.t)
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.t, got, tc.want)
		}
		if !validComponentName(got) {
			t.Errorf("%s: %q is not a valid component name", tc.t, got)
		}
	}
	for _, bad := range []string{"", "[]*skilld_TaskLogEntry", "Page[x]", "a b", "map[string]int", "Ünï"} {
		if validComponentName(bad) {
			t.Errorf("%q passes as a component name", bad)
		}
	}
}

// TestUniqueName checks that a name another type holds is qualified by the
// package, then numbered.
func TestUniqueName(t *testing.T) {
	taken := map[string]bool{"Event": true}
	isTaken := func(n string) bool { return taken[n] }
	if got := uniqueName("Event", reflect.TypeFor[[]*agent.Event](), isTaken); got != "AgentEvent" {
		t.Errorf("first clash: %q", got)
	}
	taken["AgentEvent"] = true
	if got := uniqueName("Event", reflect.TypeFor[agent.Event](), isTaken); got != "AgentEvent2" {
		t.Errorf("second clash: %q", got)
	}
	if got := uniqueName("Fresh", reflect.TypeFor[agent.Event](), isTaken); got != "Fresh" {
		t.Errorf("no clash: %q", got)
	}
}

type selfEncoding struct{ n int }

func (s selfEncoding) MarshalJSON() ([]byte, error) { return json.Marshal(s.n) }

type textEncoding struct{}

func (*textEncoding) MarshalText() ([]byte, error) { return []byte("x"), nil }

// TestSchemaRefusesSelfEncoding checks that a type which encodes itself
// cannot enter the document described by its Go fields: a result that
// grows one fails the generator (and so every test) until it has a schema.
func TestSchemaRefusesSelfEncoding(t *testing.T) {
	g, err := newSchemaGen()
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct {
			V selfEncoding `json:"v"`
		}](),
		reflect.TypeFor[struct {
			V []map[string]*textEncoding `json:"v"`
		}](),
		reflect.TypeFor[struct {
			V interface{ Close() error } `json:"v"`
		}](),
	} {
		if _, err := g.schema(typ); err == nil || !strings.Contains(err.Error(), ".V") {
			t.Errorf("%s: err %v, want one naming the field", typ, err)
		}
	}
	// Skipped fields, and the self-encoding types the generator knows,
	// are fine.
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct {
			V selfEncoding `json:"-"`
			T time.Time    `json:"t"`
			R json.RawMessage
			E []agent.Event
		}](),
		reflect.TypeFor[skilld.Task](),
	} {
		if _, err := g.schema(typ); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
}

// TestSchemaRequestBodiesRequireNothing checks that a request body's schema
// is what decoding accepts: no property required at any depth.
func TestSchemaRequestBodiesRequireNothing(t *testing.T) {
	doc, err := OpenAPI("test")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(doc["paths"])
	var paths map[string]map[string]struct {
		RequestBody *struct {
			Content map[string]struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"content"`
		} `json:"requestBody"`
	}
	if err := json.Unmarshal(raw, &paths); err != nil {
		t.Fatal(err)
	}
	n := 0
	for p, ops := range paths {
		for m, op := range ops {
			if op.RequestBody == nil {
				continue
			}
			if s, ok := op.RequestBody.Content["application/json"]; ok {
				n++
				if strings.Contains(string(s.Schema), `"required"`) {
					t.Errorf("%s %s: the JSON body requires properties: %s", m, p, s.Schema)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no JSON request body in the document")
	}
}

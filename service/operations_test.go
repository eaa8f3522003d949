package service_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/skilld/skilld/service"
)

// TestOperationsListEveryOp reads the Op declarations of operations.go and
// checks that Operations lists each exactly once, that nothing else is
// listed, and that each Op is named after its wire name, so that a search
// for either finds the other.
func TestOperationsListEveryOp(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "operations.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{} // wire name → Go name
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				call, ok := vs.Values[i].(*ast.CallExpr)
				if !ok || !strings.HasPrefix(name.Name, "Op") {
					continue
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s: the wire name is not a literal", name.Name)
				}
				wire, _ := strconv.Unquote(lit.Value)
				declared[wire] = name.Name
			}
		}
	}
	listed := map[string]int{}
	for _, op := range service.Operations() {
		listed[op.Name]++
		if _, ok := declared[op.Name]; !ok {
			t.Errorf("Operations lists %s, which no Op declares", op.Name)
		}
	}
	for wire, name := range declared {
		if listed[wire] != 1 {
			t.Errorf("%s (%s) is listed %d times by Operations, want 1", name, wire, listed[wire])
		}
		if want := goName(wire); !strings.EqualFold(name, want) {
			t.Errorf("%s is named %s, want %s", wire, name, want)
		}
	}
}

// goName is the Go name of a wire name: "skills.versions.get" is
// OpSkillsVersionsGet. Case is compared loosely, for initialisms (GitHub).
func goName(wire string) string {
	var b strings.Builder
	b.WriteString("Op")
	for _, part := range strings.FieldsFunc(wire, func(r rune) bool { return r == '.' || r == '_' }) {
		r := []rune(part)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

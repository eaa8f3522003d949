package agent_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlacementDecidedOnce holds the residency models apart: apart from
// validating the configuration and picking the residency, no code of the
// package asks which placement the run has, so a rule of one model cannot
// creep into code both run.
func TestPlacementDecidedOnce(t *testing.T) {
	allowed := map[string]bool{"config.go": true, "residency.go": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if allowed[name] || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (placementTerm(n.X) || placementTerm(n.Y)) {
					t.Errorf("%s: compares the placement; ask the run's residency instead", fset.Position(n.Pos()))
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && placementTerm(n.Tag) {
					t.Errorf("%s: switches on the placement; ask the run's residency instead", fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
}

// placementTerm reports whether e names a placement or a config's
// Placement field.
func placementTerm(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "PlacementContext" || e.Name == "PlacementTranscript"
	case *ast.SelectorExpr:
		return e.Sel.Name == "Placement" || placementTerm(e.Sel)
	}
	return false
}

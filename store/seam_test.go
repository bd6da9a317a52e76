package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeamRemoteConfined keeps the object-store implementation behind
// the two seams (Backend, MetaStore: doc.go): no file of the package but
// the remote_*.go ones names a Store's remote.
func TestSeamRemoteConfined(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasPrefix(name, "remote_") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "remote" {
				t.Errorf("%s: .remote outside remote_*.go: ask s.backend or s.meta (a method, or an optional interface)", fset.Position(sel.Pos()))
			}
			return true
		})
	}
}

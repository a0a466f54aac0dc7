/*
Copyright 2026 The serin authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// How an e2e test shares the testbed. Every Test function of this package
// says it in its first statement, with one of these two calls
// (TestEveryTestSaysHowItShares holds them to it):
//
//   - shared(t): the test needs nothing of the testbed but a namespace of
//     its own (and agents, servers and Git repositories it starts itself).
//     It runs beside the other shared tests, at most -test.parallel of
//     them at a time (defaultParallel unless -parallel or SERIN_E2E_PARALLEL
//     says otherwise).
//   - alone(t, why): the test needs the testbed to itself, because it
//     kills or restarts a process others use, cuts a host, starts a second
//     cluster, reads something of the shared agent that other tests also
//     move, or measures timing that other tests' load would distort. Go
//     runs every such test, one at a time, before the shared tests start,
//     so none of them ever overlaps another test.

// defaultParallel is how many shared tests run at once when -parallel is
// not given: the testbed's processes (API server, etcd, Traefik,
// Prometheus, Flux, the agent) need the two cores more than the tests,
// which mostly wait on analysis intervals. At 4 the two cores were
// saturated (0–15 % idle) and a data plane's reload lagged behind the
// weights serin wrote.
const defaultParallel = 3

// shared marks a test that runs beside the other shared tests.
func shared(t *testing.T) {
	t.Helper()
	t.Parallel()
	// Every test that runs alone has ended: what only they use goes.
	sharedPhase.Do(func() { stopSecondCluster(false) })
}

// sharedPhase is the start of the shared tests.
var sharedPhase sync.Once

// alone marks a test that has the testbed to itself; why says what it does
// that no other test may see or disturb.
func alone(t *testing.T, why string) {
	t.Helper()
	if strings.TrimSpace(why) == "" {
		t.Fatal("alone: say why the test needs the testbed to itself")
	}
}

// setParallel sets -test.parallel to defaultParallel unless the command
// line or SERIN_E2E_PARALLEL chose a number.
func setParallel() error {
	explicit := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			explicit = true
		}
	})
	if explicit {
		return nil
	}
	n := defaultParallel
	if v := os.Getenv("SERIN_E2E_PARALLEL"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			return fmt.Errorf("SERIN_E2E_PARALLEL=%q: want a number of tests, 1 or more", v)
		}
	}
	return flag.Set("test.parallel", strconv.Itoa(n))
}

// Every Test function of the package starts by saying how it shares the
// testbed, so that a new test cannot run beside others by accident, nor
// hold the suite up alone without a reason written down.
func TestEveryTestSaysHowItShares(t *testing.T) {
	shared(t)
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	tests := 0
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
				continue
			}
			tests++
			if how := sharingOf(fn); how == "" {
				t.Errorf("%s: %s must start with shared(t) or alone(t, why)", fset.Position(fn.Pos()), fn.Name.Name)
			}
		}
	}
	if tests < 100 {
		t.Fatalf("found %d Test functions in %v; the e2e package has more than 100", tests, files)
	}
}

// sharingOf is "shared" or "alone" when fn's first statement is that call,
// else "".
func sharingOf(fn *ast.FuncDecl) string {
	if fn.Body == nil || len(fn.Body.List) == 0 {
		return ""
	}
	st, ok := fn.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return ""
	}
	call, ok := st.X.(*ast.CallExpr)
	if !ok {
		return ""
	}
	id, ok := call.Fun.(*ast.Ident)
	if !ok {
		return ""
	}
	switch {
	case id.Name == "shared" && len(call.Args) == 1:
		return id.Name
	case id.Name == "alone" && len(call.Args) == 2:
		if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING && len(lit.Value) > 2 {
			return id.Name
		}
	}
	return ""
}

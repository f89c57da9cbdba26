package gate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParsePassing(t *testing.T) {
	tests := []struct {
		name   string
		output string
		want   []string
	}{
		{"go test -v", "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\n=== RUN   TestC\n=== RUN   TestC/x\n--- PASS: TestC (0.00s)\n    --- PASS: TestC/x (0.00s)\nFAIL\nFAIL\texample.com/calc\t0.01s\n",
			[]string{"example.com/calc.TestA", "example.com/calc.TestC", "example.com/calc.TestC/x"}},
		{"go test -json", `{"Action":"pass","Package":"example.com/calc","Test":"TestA"}` + "\n" + `{"Action":"fail","Package":"example.com/calc","Test":"TestB"}` + "\n" + `{"Action":"pass","Package":"example.com/calc"}` + "\n",
			[]string{"example.com/calc.TestA"}},
		{"pytest -v", "tests/test_a.py::test_one PASSED   [ 50%]\ntests/test_a.py::test_two FAILED   [100%]\n", []string{"tests/test_a.py::test_one"}},
		{"cargo", "running 2 tests\ntest tests::a ... ok\ntest tests::b ... FAILED\n", []string{"tests::a"}},
		{"tap", "TAP version 13\nok 1 - adds\nnot ok 2 - subtracts\nok 3 - skipped # SKIP no\n1..3\n", []string{"adds"}},
		{"plain go test names no passing test", "ok  \texample.com/calc\t0.01s\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, known := ParsePassing(tt.output)
			require.Equal(t, len(tt.want) > 0, known)
			if tt.want == nil {
				require.Empty(t, got)
				return
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestVanished(t *testing.T) {
	tests := []struct {
		name                   string
		want, failing, passing []string
		vanished               []string
	}{
		{"passes now", []string{"p.TestX"}, nil, []string{"p.TestX", "p.TestY"}, nil},
		{"still failing", []string{"p.TestX"}, []string{"p.TestX"}, nil, nil},
		{"deleted", []string{"p.TestX", "p.TestZ"}, nil, []string{"p.TestY", "p.TestZ"}, []string{"p.TestX"}},
		{"a package that did not build shows when a test in it runs", []string{"p [build failed]"}, nil, []string{"p.TestY"}, nil},
		{"a package that did not build and has no test now", []string{"p [build failed]"}, nil, []string{"q.TestY"}, []string{"p [build failed]"}},
		{"pytest collection error, then its tests run", []string{"tests/test_c.py"}, nil, []string{"tests/test_c.py::test_a"}, nil},
		{"a compile error is no test", []string{"could not compile `x` (lib test)"}, nil, []string{"a::b"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.vanished, Vanished(tt.want, tt.failing, tt.passing))
		})
	}
}

func TestTestLeaf(t *testing.T) {
	for in, want := range map[string]string{
		"example.com/x.y/calc.TestAdd/neg":    "TestAdd",
		"example.com/calc":                    "",
		"example.com/calc [build failed]":     "",
		"tests/test_a.py::TestC::test_b[1-2]": "test_b",
		"tests/test_a.py":                     "",
		"tests::adds":                         "adds",
		"src/a.test.js > math > adds two":     "adds two",
		"could not compile `calc` (lib test)": "",
		"example.com/calc.ExampleAdd":         "ExampleAdd",
	} {
		require.Equal(t, want, TestLeaf(in), in)
	}
}

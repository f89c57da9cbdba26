package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/temporalio/sqlparser"
)

// oddPaths are repository paths a person may have.
var oddPaths = []struct {
	name  string
	path  string
	exact bool // the embedded engine can match it in a query
}{
	{"plain", "/home/ann/src/app", true},
	{"space", "/home/ann/My Projects/app", true},
	{"unicode", "/home/zoë/代码/app", true},
	{"like wildcards", "/srv/100%_done/*", true},
	{"parentheses and semicolon", "/srv/a (copy); b", true},
	{"single quote", "/home/ann/ann's app", false},
	{"double quote", `/home/ann/the "app"`, false},
	{"backslash", `/home/ann/a\b`, false},
	{"trailing backslash", `/home/ann/app\`, false},
	{"quote after backslash", `/home/ann/a\'b`, false},
	{"newline", "/home/ann/a\nb", false},
	{"tab", "/home/ann/a\tb", false},
}

// Every odd path is quoted so the engine's own query parser reads back
// exactly the path; exact says whether the engine, which re-escapes the
// parsed value when it writes SQL, still sees the path as written.
func TestQueryValue(t *testing.T) {
	for _, tt := range oddPaths {
		t.Run(tt.name, func(t *testing.T) {
			clause, exact := whereEqual("Repo", tt.path)
			stmt, err := sqlparser.Parse("select * from t where " + clause)
			require.NoError(t, err, clause)
			cmp := stmt.(*sqlparser.Select).Where.Expr.(*sqlparser.ComparisonExpr)
			val := cmp.Right.(*sqlparser.SQLVal)
			require.Equal(t, sqlparser.StrVal, val.Type)
			require.Equal(t, tt.path, string(val.Val), "the parser reads back the path")
			require.Equal(t, tt.exact, exact)
			require.Equal(t, tt.exact, sqlparser.String(val) == "'"+tt.path+"'", "exact is whether the SQL the engine writes holds the path as written")
		})
	}
}

// list --here narrows by repository in the query when the engine can
// match the path, and otherwise by the listed runs' repository, whole list
// first, then the limit.
func TestRunFilter(t *testing.T) {
	for _, tt := range oddPaths {
		t.Run(tt.name, func(t *testing.T) {
			var f runFilter
			f.equal("Repo", tt.path, func(r RunRow) bool { return r.Repo == tt.path })
			runs := []RunRow{{ID: "a", Repo: tt.path}, {ID: "b", Repo: "/elsewhere"}, {ID: "c", Repo: tt.path}}
			if tt.exact {
				require.NotEmpty(t, f.query())
				require.Equal(t, 1, f.listLimit(1))
				require.Equal(t, runs, f.apply(runs, 1), "the engine did the narrowing")
				return
			}
			require.Empty(t, f.query())
			require.Equal(t, 0, f.listLimit(1), "all runs are listed")
			require.Equal(t, []RunRow{{ID: "a", Repo: tt.path}}, f.apply(runs, 1))
			require.Equal(t, []RunRow{{ID: "a", Repo: tt.path}, {ID: "c", Repo: tt.path}}, f.apply(runs, 0))
		})
	}
}

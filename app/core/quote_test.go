package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/temporalio/sqlparser"
)

// Every odd value is quoted so the engine's own query parser reads back
// exactly the value; exact says whether the engine, which re-escapes the
// parsed value when it writes SQL, still sees it as written.
func TestQuote(t *testing.T) {
	for _, tt := range []struct {
		name  string
		value string
		exact bool
	}{
		{"plain", "/home/ann/src/app", true},
		{"empty", "", true},
		{"space", "/home/ann/My Projects/app", true},
		{"unicode", "/home/zoë/代码/app", true},
		{"like wildcards", "/srv/100%_done/*", true},
		{"parentheses and semicolon", "/srv/a (copy); b", true},
		{"sql in a name", "/srv/x' OR '1'='1", false},
		{"single quote", "/home/ann/ann's app", false},
		{"double quote", `/home/ann/the "app"`, false},
		{"both quote kinds", `/home/ann/ann's "app"`, false},
		{"backslash", `/home/ann/a\b`, false},
		{"trailing backslash", `/home/ann/app\`, false},
		{"escaped quote in the name", `/home/ann/a\'b`, false},
		{"escaped double quote in the name", `/home/ann/a\"b`, false},
		{"newline", "/home/ann/a\nb", false},
		{"carriage return", "/home/ann/a\r\nb", false},
		{"tab", "/home/ann/a\tb", false},
		{"nul", "/home/ann/a\x00b", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q, exact := QuoteExact(tt.value)
			require.Equal(t, Quote(tt.value), q)
			stmt, err := sqlparser.Parse("select * from t where Repo = " + q + " AND ExecutionStatus = 'Running'")
			require.NoError(t, err, q)
			and := stmt.(*sqlparser.Select).Where.Expr.(*sqlparser.AndExpr)
			val := and.Left.(*sqlparser.ComparisonExpr).Right.(*sqlparser.SQLVal)
			require.Equal(t, sqlparser.StrVal, val.Type)
			require.Equal(t, tt.value, string(val.Val), "the parser reads back the value, and the query goes on after it")
			require.Equal(t, tt.exact, exact)
			require.Equal(t, tt.exact, sqlparser.String(val) == "'"+tt.value+"'", "exact is whether the SQL the engine writes holds the value as written")
		})
	}
}

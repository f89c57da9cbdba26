package gate

import (
	"path"
	"regexp"
	"strings"
)

// ScrubPatterns are the environment variable names ScrubEnv removes: vendor
// API keys, tokens, secrets and passwords, personal access tokens, auth
// headers, connection strings, cloud credentials, and horizon's own
// settings. A '*' matches any run of characters; matching ignores case.
// Secret also removes a variable of any name whose value is a URL that
// carries a password (CredentialURL).
var ScrubPatterns = []string{
	"*_API_KEY",
	"*_TOKEN",
	"*_SECRET",
	"*_PASSWORD",
	"*_PASSWD",
	"*_PAT",
	"*_AUTH",
	"*_DSN",
	"*_CREDENTIALS",
	"*_PRIVATE_KEY",
	"PGPASSWORD",
	"MYSQL_PWD",
	"AWS_*",
	"ANTHROPIC_*",
	"OPENAI_*",
	"GEMINI_*",
	"GOOGLE_*",
	"AZURE_*",
	"GITHUB_TOKEN",
	"OPENCODE_SERVER_PASSWORD",
	"HORIZON_*",
}

// CredentialURL matches a value that is, or starts with, a URL carrying a
// password in its user info: scheme://user:password@host. Such a value is a
// secret whatever its variable is called (DATABASE_URL, REDIS_URL, a
// webhook). A URL with a user and no password is not matched.
var CredentialURL = regexp.MustCompile("(?i)" + CredentialURLPattern)

// CredentialURLPattern is CredentialURL's expression, to be matched
// ignoring case; the agents' shell plugin compiles the same text.
const CredentialURLPattern = `^\s*[a-z][a-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@`

// ScrubEnv returns env ("NAME=value" entries) without its secrets (Secret),
// except variables whose name matches one of the allow globs (for example
// "MY_*"; matched case-sensitively with path.Match syntax). The input is not
// modified. Entries without '=' are kept as they are.
func ScrubEnv(env, allow []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if ok && Secret(name, value) && !allowed(name, allow) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Secret says whether a variable is a secret, by its name (ScrubPatterns)
// or by the shape of its value (CredentialURL). It is the one rule the gate
// and the agents' shells both follow.
func Secret(name, value string) bool {
	return secretName(name) || CredentialURL.MatchString(value)
}

func secretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, p := range ScrubPatterns {
		if globMatch(p, upper) {
			return true
		}
	}
	return false
}

// globMatch is path.Match with fast paths for the "*SUFFIX", "PREFIX*" and
// literal shapes every ScrubPatterns entry has; it runs for every variable of
// every gate run.
func globMatch(pattern, name string) bool {
	switch i := strings.IndexAny(pattern, "*?[\\"); {
	case i < 0:
		return pattern == name
	case i == 0 && pattern[0] == '*' && !strings.ContainsAny(pattern[1:], "*?[\\"):
		return strings.HasSuffix(name, pattern[1:])
	case i == len(pattern)-1 && pattern[i] == '*':
		return strings.HasPrefix(name, pattern[:i])
	}
	ok, _ := path.Match(pattern, name)
	return ok
}

func allowed(name string, allow []string) bool {
	for _, p := range allow {
		if globMatch(p, name) {
			return true
		}
	}
	return false
}

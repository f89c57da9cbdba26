package gate

import (
	"path"
	"strings"
)

// ScrubPatterns are the environment variable names ScrubEnv removes: vendor
// API keys, tokens, secrets and passwords, cloud credentials, and horizon's
// own settings. A '*' matches any run of characters; matching ignores case.
var ScrubPatterns = []string{
	"*_API_KEY",
	"*_TOKEN",
	"*_SECRET",
	"*_PASSWORD",
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

// ScrubEnv returns env ("NAME=value" entries) without the variables named by
// ScrubPatterns, except those whose name matches one of the allow globs (for
// example "MY_*"; matched case-sensitively with path.Match syntax). The input
// is not modified. Entries without '=' are kept as they are.
func ScrubEnv(env, allow []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if ok && secretName(name) && !allowed(name, allow) {
			continue
		}
		out = append(out, kv)
	}
	return out
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

package core

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// idPattern is what every horizon ID looks like (runs, loops, tasks,
// supervisors, queue entries, features): letters, digits and . _ : -,
// starting with a letter or digit, at most 200 long. An ID is used in
// file paths (runs/<id>, tasks/<id>.json) and engine queries, so anything
// else, such as a path separator, "..", a control character or an empty
// string, is refused before it is used.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$`)

// BadIDError is an ID that cannot be one: each surface says it as bad
// input (the CLI's exit 2, the API's 400).
type BadIDError struct {
	Kind string // "run", "task", ...
	ID   string
}

func (e *BadIDError) Error() string {
	if strings.TrimSpace(e.ID) == "" {
		return fmt.Sprintf("an empty %s ID names nothing; give the %s ID (`horizon list` shows them)", e.Kind, e.Kind)
	}
	return fmt.Sprintf("%s is not a %s ID: IDs are letters, digits and . _ : - (at most 200), such as run-20261201-090000-ab12cd", strconv.QuoteToGraphic(e.ID), e.Kind)
}

// CheckID refuses an id of kind that is not an ID.
func CheckID(kind, id string) error {
	if !idPattern.MatchString(id) || strings.Contains(id, "..") {
		return &BadIDError{Kind: kind, ID: id}
	}
	return nil
}

package agent

import (
	"fmt"
	"strings"

	"github.com/horizon/horizon/horizon"
)

// MaxSpecialistDraft bounds the manifest a lead drafts: a specialist's
// prompt is a page or two, and the draft travels in the session's
// activity result and the workflow's history.
const MaxSpecialistDraft = 64 << 10

// ParseSpecialist extracts the last horizon-specialist block of text: a
// specialist manifest (a YAML frontmatter and a prompt) the lead drafted.
// Unlike the other blocks it is not JSON; whether it is a manifest that
// may be written is internal/specialist's to decide (CheckDraft).
func ParseSpecialist(text string) (string, error) {
	const kind = horizon.BlockSpecialist
	body, ok := lastBlock(text, string(kind))
	if !ok {
		return "", protoErr(kind, fmt.Sprintf("no ```%s block in the final message", kind))
	}
	body = strings.TrimSpace(body)
	if body == "" {
		return "", protoErr(kind, fmt.Sprintf("empty %s block", kind))
	}
	if len(body) > MaxSpecialistDraft {
		return "", protoErr(kind, fmt.Sprintf("the %s block holds %d bytes; a manifest may have %d at most", kind, len(body), MaxSpecialistDraft))
	}
	return body + "\n", nil
}

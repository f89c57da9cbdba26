package activities

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidPlan(t *testing.T) {
	good := "Here it is.\n\n```horizon-plan\n{\"milestones\": [{\"title\": \"Fix\", \"features\": [{\"id\": \"f1\", \"title\": \"Make add add\", \"acceptance\": [\"2+3=5\"], \"kind\": \"bounded\"}]}], \"ambiguity\": \"LOW\"}\n```"
	p, err := validPlan("goal", good)
	require.NoError(t, err)
	require.Equal(t, "f1", p.Milestones[0].Features[0].ID)

	_, err = validPlan("goal", "no block at all")
	require.ErrorContains(t, err, "horizon-plan")

	_, err = validPlan("goal", "```horizon-plan\n{\"milestones\": [{\"title\": \"x\", \"features\": [{\"id\": \"f1\", \"title\": \"t\", \"kind\": \"huge\"}]}], \"ambiguity\": \"LOW\"}\n```")
	require.ErrorContains(t, err, "huge")
}

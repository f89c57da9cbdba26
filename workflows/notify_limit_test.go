package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/config"
)

// The configuration refuses a notify setting whose delivery could outlast
// the activity's timeout: the two limits are one.
func TestNotifyTimeoutIsTheConfigLimit(t *testing.T) {
	require.Equal(t, config.NotifyDeliveryLimit, NotifyTimeout)
}

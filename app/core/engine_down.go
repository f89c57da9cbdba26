package core

import (
	"context"
	"errors"

	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// EngineUnavailable tells the engine's absence from its answers, the one
// classifier every surface uses (the web says 503, the CLI exit 3). The
// SDK retries an engine that refuses connections until the request's
// deadline, so a deadline passed is the engine not answering too.
func EngineUnavailable(err error) bool {
	var (
		un *serviceerror.Unavailable
		de *serviceerror.DeadlineExceeded
	)
	if errors.As(err, &un) || errors.As(err, &de) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	st, ok := grpcstatus.FromError(err)
	return ok && (st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded)
}

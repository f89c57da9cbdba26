package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
)

// PayloadLimit is the largest encoded result an activity may return. The
// engine refuses a result over 2 MiB and the activity is then retried for
// ever with the same outcome, so a roadmap, plan, transcript or report
// that has grown past this fails once, here, with a message that says so.
const PayloadLimit = 1 << 20

// ErrTypePayloadTooLarge is an activity result over PayloadLimit; it is
// not retried.
const ErrTypePayloadTooLarge = "PayloadTooLarge"

// PayloadGuard is the worker interceptor that enforces PayloadLimit on the
// result of every activity the worker runs: the one place the class is
// decided, whatever activity a later change adds.
func PayloadGuard() interceptor.WorkerInterceptor { return &payloadGuard{} }

type payloadGuard struct {
	interceptor.WorkerInterceptorBase
}

func (*payloadGuard) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &payloadActivity{}
	i.Next = next
	return i
}

type payloadActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

func (p *payloadActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	res, err := p.Next.ExecuteActivity(ctx, in)
	if err != nil || res == nil {
		return res, err
	}
	return res, checkPayload(activity.GetInfo(ctx).ActivityType.Name, res)
}

// checkPayload fails with ErrTypePayloadTooLarge when res encodes to more
// than PayloadLimit.
func checkPayload(activityName string, res any) error {
	pl, err := converter.GetDefaultDataConverter().ToPayload(res)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: its result cannot be encoded: %v", activityName, err), ErrTypePayloadTooLarge, nil)
	}
	if n := proto.Size(pl); n > PayloadLimit {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"%s: its result is %s, over the %s an activity may return; the input behind it (a roadmap, a plan, a report) is too large: split it",
			activityName, byteSize(n), byteSize(PayloadLimit)), ErrTypePayloadTooLarge, nil)
	}
	return nil
}

// byteSize is n in KiB or MiB, one decimal.
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

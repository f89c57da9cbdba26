package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/horizon/horizon/horizon"
)

// ScheduleStatus is a schedule as the engine has it.
type ScheduleStatus struct {
	ID            string        `json:"id"`
	Cron          string        `json:"cron"`
	TimeZone      string        `json:"time_zone"`
	CatchupWindow time.Duration `json:"catchup_window"`
	Next          []time.Time   `json:"next"`
	Paused        bool          `json:"paused"`
	Actions       int           `json:"actions"`
	// Recent are the workflows the schedule started last, oldest first
	// (`horizon history ID` shows one).
	Recent []string `json:"recent"`
}

func describeSchedule(ctx context.Context, c client.Client, id string) (*ScheduleStatus, error) {
	d, err := c.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, nil
		}
		return nil, fmt.Errorf("describe schedule %s: %w", id, err)
	}
	st := &ScheduleStatus{ID: id, Next: d.Info.NextActionTimes, Actions: d.Info.NumActions, Recent: []string{}}
	for _, r := range d.Info.RecentActions {
		if r.StartWorkflowResult != nil {
			st.Recent = append(st.Recent, r.StartWorkflowResult.WorkflowID)
		}
	}
	if len(st.Next) > 3 {
		st.Next = st.Next[:3]
	}
	if p := d.Schedule.Policy; p != nil {
		st.CatchupWindow = p.CatchupWindow
	}
	if sp := d.Schedule.Spec; sp != nil {
		st.TimeZone = sp.TimeZoneName
	}
	if s := d.Schedule.State; s != nil {
		st.Paused = s.Paused
	}
	if p, ok := d.Memo.GetFields()[ScheduleMemoCron]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &st.Cron)
	}
	return st, nil
}

// SupervisorView is a supervisor with its two schedules.
type SupervisorView struct {
	Supervisor *horizon.SupervisorState `json:"supervisor"`
	Schedules  []ScheduleStatus         `json:"schedules"`
	// Queue is the supervisor's queue, next first, as QueueOf shows it:
	// one read serves a panel that shows both.
	Queue []QueueView `json:"queue"`
}

// SupervisorView reads supervisor id with its schedules (the nightly
// decomposition, the daily pass) as the engine has them.
func (a *App) SupervisorView(ctx context.Context, id string) (*SupervisorView, error) {
	s, err := a.Supervisors().Supervisor(ctx, id)
	if err != nil {
		return nil, err
	}
	view := &SupervisorView{Supervisor: s, Schedules: []ScheduleStatus{}, Queue: QueueOf(s)}
	for _, sid := range []string{horizon.DecomposeScheduleID(id), horizon.DailyScheduleID} {
		st, err := describeSchedule(ctx, a.c, sid)
		if err != nil {
			return nil, err
		}
		if st != nil {
			view.Schedules = append(view.Schedules, *st)
		}
	}
	return view, nil
}

package horizon

import "fmt"

// GoalLimit is the longest goal horizon takes. A goal travels in every
// brief, in the run's memo and its history; the details of a long one
// belong in a file of the repository that the goal names.
const GoalLimit = 16 << 10

// CheckGoal refuses a goal over GoalLimit, saying what to do instead.
// An empty goal is the caller's to refuse (each says how to give one).
func CheckGoal(goal string) error {
	if n := len(goal); n > GoalLimit {
		return fmt.Errorf("the goal is %d bytes; a goal may be %d at most: write the details in a file of the repository and name it in the goal", n, GoalLimit)
	}
	return nil
}

// Command horizon is the unattended supervisor for AI coding agents: it
// turns a goal into a durable Temporal run whose worker, gate and auditor
// decide, step by step, what lands on a branch of verified commits.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:])) }

package driver

import "time"

// ListOptions say which page of a listing Conn.List reads.
type ListOptions struct {
	// Target is whose executions are listed.
	Target Target
	// Caller is who started them: only the executions that Caller started are listed (empty:
	// those started without a caller).
	Caller string
	// Page is the page to read: "" for the first, else the next page an earlier List gave.
	Page string
	// Limit is the most executions the page holds.
	Limit int
}

// SweepOptions say which page of a sweep Sweeper.Sweep and EndSweeper.SweepEnded read. The two
// take the same options: Since is the one only SweepEnded reads, and Sweep ignores it.
type SweepOptions struct {
	// Targets are the targets of one SweepGroup whose executions the sweep lists.
	Targets []Target
	// Refs are the executions of Targets that the sweep is about, as Start returned them: the
	// listing shows only these.
	Refs []Ref
	// Page is the page to read: "" for the first, else the next page an earlier sweep of the same
	// Targets and Refs gave.
	Page string
	// Since, for SweepEnded, is the time after which the executions listed ended; Sweep ignores
	// it.
	Since time.Time
}

// Package security probes a taskgate build from outside, as an attacker would: it runs `taskgate
// dev --config DIR --http` with two API-key principals (alice and bob) and an OAuth issuer whose
// keys the probe serves itself, next to a real Temporal server and Step Functions endpoint, and
// tries to read, start, starve and name what it should not. Each probe says what must hold and
// what it saw; TestProbes fails for every probe that does not hold.
//
// PROBE_TASKGATE names another build to probe (to compare two releases), and PROBE_TABLE a file
// to write the results to as a Markdown table. The engines' addresses come from TEMPORAL_ADDRESS
// and SFN_ENDPOINT, as scripts/with-engines sets them.
package security

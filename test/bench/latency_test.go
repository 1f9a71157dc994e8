package main

import "testing"

// TestSequenceBalancesNeighbours: across the rounds (and from one round into the next), each op
// runs right after each other op, and at each position, about equally often. A rotation of one
// fixed order fails it: there the taskgate poll ran right after the direct call in 3 rounds of 4.
func TestSequenceBalancesNeighbours(t *testing.T) {
	for _, k := range []int{2, 3, 4} {
		const rounds = 1200
		after := make([][]int, k) // after[a][b]: b ran right after a
		at := make([][]int, k)    // at[i][pos]
		for i := range k {
			after[i], at[i] = make([]int, k), make([]int, k)
		}
		prev := -1
		for _, order := range sequence(k, rounds) {
			if len(order) != k {
				t.Fatalf("k=%d: a round of %d ops", k, len(order))
			}
			seen := make([]bool, k)
			for pos, i := range order {
				if seen[i] {
					t.Fatalf("k=%d: op %d twice in %v", k, i, order)
				}
				seen[i] = true
				at[i][pos]++
				if prev >= 0 {
					after[prev][i]++
				}
				prev = i
			}
		}
		// Within a round, b runs right after a (a != b) in a shuffle's k-1 neighbours with
		// chance 1/k; across a round's end, with chance 1/k². Allow a third either way.
		for a := range k {
			for b := range k {
				if a == b {
					continue
				}
				want := float64(rounds) * (1/float64(k) + 1/float64(k*k))
				if got := float64(after[a][b]); got < want*2/3 || got > want*4/3 {
					t.Errorf("k=%d: op %d ran right after op %d %v times, want about %.0f", k, b, a, got, want)
				}
			}
			for pos := range k {
				want := float64(rounds) / float64(k)
				if got := float64(at[a][pos]); got < want*2/3 || got > want*4/3 {
					t.Errorf("k=%d: op %d ran at position %d %v times, want about %.0f", k, a, pos, got, want)
				}
			}
		}
	}
}

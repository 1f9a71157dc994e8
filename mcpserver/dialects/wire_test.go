package dialects

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestTimestampAsFormat(t *testing.T) {
	times := []time.Time{
		{}, time.Unix(0, 0), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 2, 3, 4, 5, 6_000_000, time.FixedZone("east", 5*3600+1800)),
	}
	for range 10000 {
		times = append(times, time.Unix(rand.Int64N(1<<36)-1<<35, rand.Int64N(int64(time.Second))).In(time.FixedZone("", rand.IntN(50000)-25000)))
	}
	for _, tm := range times {
		if got, want := timestamp(tm), tm.UTC().Format(timestampLayout); got != want {
			t.Fatalf("timestamp(%v) = %s, want %s", tm, got, want)
		}
	}
}

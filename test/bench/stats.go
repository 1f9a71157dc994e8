package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"
)

// Row is one figure of the results, as written to -json.
type Row struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Direct is the same measure without taskgate (or the baseline a figure names); null when
	// the figure has none.
	Direct   *float64 `json:"direct"`
	Taskgate float64  `json:"taskgate"`
	// Ratio is taskgate / direct: the median of the ratios of each repetition.
	Ratio *float64 `json:"ratio"`
	// RatioMin and RatioMax are the spread of that ratio over the repetitions (more than one).
	RatioMin *float64 `json:"ratioMin,omitempty"`
	RatioMax *float64 `json:"ratioMax,omitempty"`

	figure int
}

// MarshalJSON writes a Taskgate that was not measured (NaN: a figure this build cannot make) as
// null, which JSON can hold.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row
	out := struct {
		plain
		Taskgate *float64 `json:"taskgate"`
	}{plain: plain(r)}
	if !math.IsNaN(r.Taskgate) {
		out.Taskgate = &r.Taskgate
	}
	return json.Marshal(out)
}

// unitErrors rows count failures: zero is the expected value, and they have no ratio (nor have
// unitCPU rows: they are evidence of what saturated, not figures).
const unitErrors = "errors"

// unitCPU rows are the CPU a process used during a phase (in ticks of 10 ms: an idle process reads
// zero).
const unitCPU = "% of a core"

// unitShare rows are fractions, and unitCount rows counts, either of which may be zero.
const (
	unitShare = "share"
	unitCount = "count"
)

// results collects the measures of each repetition, row by row.
type results struct {
	order []string
	accs  map[string]*acc
	notes map[int][]string
}

type acc struct {
	figure     int
	name, unit string
	direct, tg []float64
	ratios     []float64
	hasDirect  bool
}

func newResults() *results { return &results{accs: map[string]*acc{}, notes: map[int][]string{}} }

// add records one repetition of a row. A NaN direct means the row has no direct counterpart. The
// row's name starts with its figure's short name, so that names are unique in the JSON.
func (r *results) add(figure int, name, unit string, direct, taskgate float64) {
	name = figureNames[figure] + ": " + name
	a, ok := r.accs[name]
	if !ok {
		a = &acc{figure: figure, name: name, unit: unit}
		r.accs[name] = a
		r.order = append(r.order, name)
	}
	a.tg = append(a.tg, taskgate)
	if !math.IsNaN(direct) {
		a.hasDirect = true
		a.direct = append(a.direct, direct)
		if unit != unitErrors && unit != unitCPU && unit != unitCount && direct > 0 && !math.IsNaN(taskgate) {
			a.ratios = append(a.ratios, taskgate/direct)
		}
	}
}

// note adds a line under a figure's table: how it was measured, what the machine did meanwhile.
func (r *results) note(figure int, format string, args ...any) {
	r.notes[figure] = append(r.notes[figure], fmt.Sprintf(format, args...))
}

func (r *results) rows() []Row {
	var out []Row
	for _, name := range r.order {
		a := r.accs[name]
		row := Row{Name: a.name, Unit: a.unit, Taskgate: round(median(a.tg)), figure: a.figure}
		if a.hasDirect {
			d := round(median(a.direct))
			row.Direct = &d
		}
		if len(a.ratios) > 0 {
			m, lo, hi := round(median(a.ratios)), round(slices.Min(a.ratios)), round(slices.Max(a.ratios))
			row.Ratio = &m
			if len(a.ratios) > 1 {
				row.RatioMin, row.RatioMax = &lo, &hi
			}
		}
		out = append(out, row)
	}
	slices.SortStableFunc(out, func(a, b Row) int { return a.figure - b.figure })
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// round keeps four significant digits.
func round(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	scale := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*scale) / scale
}

// percentile is the nearest-rank percentile p (0-100) of sorted durations, in milliseconds.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	i = min(max(i, 0), len(sorted)-1)
	return ms(sorted[i])
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// figureNames start the names of each figure's rows (the fleet's growth is named as the fleet, as
// issue 30 names its rows).
var figureNames = map[int]string{1: "poll", 2: "start", 3: "throughput", 4: "memory", 5: "scale-out", 6: "economy", 7: "fleet", 8: "fleet", 9: "fleet-platform"}

// The figures, in the order of the issue.
var figureTitles = map[int]string{
	1: "1. Poll latency",
	2: "2. Start latency",
	3: "3. Throughput",
	4: "4. Memory",
	5: "5. Scale-out",
	6: "6. Engine economy",
	7: "7. Fleet",
	8: "8. Fleet: how the cost grows",
	9: "9. Fleet platform: replicas behind a balancer",
}

func format(p *float64) string {
	if p == nil {
		return "-"
	}
	return formatValue(*p)
}

func formatValue(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.1f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func formatRatio(r Row) (ratio, spread string) {
	if r.Ratio == nil {
		return "-", "-"
	}
	ratio = fmt.Sprintf("%.2fx", *r.Ratio)
	spread = "-"
	if r.RatioMin != nil {
		spread = fmt.Sprintf("%.2f-%.2f", *r.RatioMin, *r.RatioMax)
	}
	return ratio, spread
}

// printTable writes the rows as a text table, figure by figure.
func printTable(w io.Writer, rows []Row, reps int) {
	width := 20
	for _, r := range rows {
		width = max(width, len(r.Name))
	}
	last := 0
	for _, r := range rows {
		if r.figure != last {
			last = r.figure
			fmt.Fprintf(w, "\n%s\n", figureTitles[r.figure])
			fmt.Fprintf(w, "%-*s  %-12s %12s %12s %8s  %s\n", width, "", "unit", "direct", "taskgate", "ratio", fmt.Sprintf("ratio min-max (%d reps)", reps))
		}
		ratio, spread := formatRatio(r)
		fmt.Fprintf(w, "%-*s  %-12s %12s %12s %8s  %s\n", width, r.Name, r.Unit, format(r.Direct), formatValue(r.Taskgate), ratio, spread)
	}
}

// writeMarkdown writes the rows as Markdown tables, with each figure's notes and the run's
// circumstances.
func writeMarkdown(path string, rows []Row, res *results, header []string, reps int) error {
	var b strings.Builder
	b.WriteString("# taskgate bench results\n\n")
	for _, h := range header {
		fmt.Fprintf(&b, "- %s\n", h)
	}
	last := 0
	for _, r := range rows {
		if r.figure != last {
			if last != 0 {
				writeNotes(&b, res.notes[last])
			}
			last = r.figure
			fmt.Fprintf(&b, "\n## %s\n\n", figureTitles[r.figure])
			fmt.Fprintf(&b, "| figure | unit | direct | taskgate | ratio | ratio min-max (%d reps) |\n|---|---|---:|---:|---:|---|\n", reps)
		}
		ratio, spread := formatRatio(r)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.Name, r.Unit, format(r.Direct), formatValue(r.Taskgate), ratio, spread)
	}
	if last != 0 {
		writeNotes(&b, res.notes[last])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func writeNotes(b *strings.Builder, notes []string) {
	if len(notes) == 0 {
		return
	}
	b.WriteString("\n")
	for _, n := range notes {
		fmt.Fprintf(b, "- %s\n", n)
	}
}

func writeJSON(path string, rows []Row) error {
	b, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
